import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { IN_MEMORY_BYTES, flushStaged, stageUnflushed } from './batch-staging.js';
import { FileTooLargeError, commitStaged } from './safe-write.js';

// What the batch's form parser relies on when a file of it is staged (docs/sync.md "Speed"): the
// part stream it owns is left as it was (no listener of the staging stays on it, whatever the
// outcome), and a flush asked again, or after the files were committed, does nothing.

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-batch-parts-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const EVENTS = ['data', 'end', 'error', 'close'] as const;
const listeners = (s: PassThrough) => Object.fromEntries(EVENTS.map((e) => [e, s.listenerCount(e)]));

describe('a part staged from a batch form', () => {
  it('keeps no listener of the staging once its file is staged in memory, streamed or refused', async () => {
    for (const [size, maxBytes] of [
      [100, 1000],
      [IN_MEMORY_BYTES + 100, 4 * IN_MEMORY_BYTES],
      [500, 100],
      [IN_MEMORY_BYTES + 100, IN_MEMORY_BYTES + 50],
    ] as const) {
      // Not destroyed at its end, so that a listener left behind is still there to count.
      const part = new PassThrough({ autoDestroy: false });
      part.on('error', () => undefined); // the parser's own
      const before = listeners(part);
      const staging = stageUnflushed(dir, part, { maxBytes });
      part.end(Buffer.alloc(size, 7));
      const outcome = await staging.then(
        (staged) => staged.bytes,
        (err: unknown) => err,
      );
      if (size > maxBytes) expect(outcome, `${size} over ${maxBytes}`).toBeInstanceOf(FileTooLargeError);
      else expect(outcome).toBe(size);
      // The part goes on (the parser drains it): the staging no longer hears it.
      part.resume();
      await new Promise((r) => setImmediate(r));
      expect(listeners(part), `${size}`).toEqual(before);
    }
  });

  it('flushes a file once: a second flush, or one after the commit, does nothing and does not fail', async () => {
    const parts = Array.from({ length: 3 }, () => new PassThrough());
    const staging = parts.map((p) => stageUnflushed(dir, p));
    parts.forEach((p, i) => p.end(`file ${i}`));
    const staged = await Promise.all(staging);
    await flushStaged(staged);
    await flushStaged(staged);
    await commitStaged(staged.map((s, i) => ({ staged: s, target: path.join(dir, `f${i}.txt`) })));
    await flushStaged(staged);
    expect(fs.readFileSync(path.join(dir, 'f2.txt'), 'utf8')).toBe('file 2');
  });

  it('leaves no file open once staged files are flushed one by one', async () => {
    const openFiles = () => fs.readdirSync('/proc/self/fd').length;
    const before = openFiles();
    const parts = Array.from({ length: 3 }, () => new PassThrough());
    const staging = parts.map((p) => stageUnflushed(dir, p));
    parts.forEach((p, i) => p.end(`file ${i}`));
    await flushStaged(await Promise.all(staging)); // fewer than a whole-file-system flush pays for
    expect(openFiles()).toBe(before);
  });
});

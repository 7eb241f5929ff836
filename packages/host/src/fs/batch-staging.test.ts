import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fuzzOptions } from '../test-support/fuzz.js';
import { IN_MEMORY_BYTES, StagingGate, flushFileSystems, flushStaged, stageUnflushed } from './batch-staging.js';
import { FileTooLargeError, commitStaged, discardStaged, isTemporaryFileName } from './safe-write.js';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-batch-staging-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const sha = (data: Buffer) => createHash('sha256').update(data).digest('hex');
const temps = () =>
  fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => isTemporaryFileName(path.basename(f)));
/** A stream of `data` cut into the given chunk sizes (the rest in one last chunk). */
const chunked = (data: Buffer, sizes: number[]) => {
  const chunks: Buffer[] = [];
  let at = 0;
  for (const size of sizes) {
    if (at >= data.length) break;
    chunks.push(data.subarray(at, at + size));
    at += size;
  }
  if (at < data.length) chunks.push(data.subarray(at));
  return Readable.from(chunks, { objectMode: false });
};

describe('staging the files of a batch', () => {
  it('stages a small file from memory, unflushed until flushStaged, then commits it whole', async () => {
    const data = Buffer.from('<p>hello</p>');
    const staged = await stageUnflushed(path.join(dir, 'a'), chunked(data, [3, 3]), { maxBytes: 100 });
    expect(staged).toMatchObject({ bytes: data.length, sha256: sha(data), unflushed: true });
    expect(fs.readFileSync(staged.tempPath)).toEqual(data);
    await flushStaged([staged, undefined]);
    expect(staged).toMatchObject({ unflushed: false });
    const target = path.join(dir, 'a', 'page.html');
    await commitStaged([{ staged, target }]);
    expect(fs.readFileSync(target)).toEqual(data);
    expect(temps()).toEqual([]);
  });

  it('streams a file past the in-memory size on to disk, the bytes read so far first', async () => {
    const data = Buffer.alloc(IN_MEMORY_BYTES * 2 + 123);
    for (let i = 0; i < data.length; i++) data[i] = (i * 31) & 0xff;
    const staged = await stageUnflushed(dir, chunked(data, Array(40).fill(64 * 1024)), { maxBytes: data.length });
    expect(staged).toMatchObject({ bytes: data.length, sha256: sha(data) });
    expect(fs.readFileSync(staged.tempPath).equals(data)).toBe(true);
  });

  it('refuses one byte over maxBytes, in memory or streamed, leaving nothing; exactly maxBytes is taken', async () => {
    for (const size of [100, IN_MEMORY_BYTES + 100]) {
      const over = Buffer.alloc(size + 1, 1);
      await expect(stageUnflushed(dir, chunked(over, [7]), { maxBytes: size })).rejects.toBeInstanceOf(
        FileTooLargeError,
      );
      expect(temps()).toEqual([]);
      const exact = await stageUnflushed(dir, chunked(over.subarray(0, size), [7]), { maxBytes: size });
      expect(exact.bytes).toBe(size);
      fs.rmSync(exact.tempPath);
    }
  });

  it('fails, never waits for ever, on a part that is gone already or is destroyed without an error', async () => {
    const gone = new PassThrough();
    gone.destroy();
    await expect(stageUnflushed(dir, gone, { maxBytes: 1000 })).rejects.toThrow('ended before its end');
    const cut = new PassThrough();
    const staging = stageUnflushed(dir, cut, { maxBytes: 1000 });
    cut.write(Buffer.alloc(10));
    cut.destroy();
    await expect(staging).rejects.toThrow('ended before its end');
    // Its neighbour that ends properly is staged.
    const whole = new PassThrough();
    const ok = stageUnflushed(dir, whole, { maxBytes: 1000 });
    whole.end(Buffer.alloc(10));
    await expect(ok).resolves.toMatchObject({ bytes: 10 });
  });

  it('fails with the source, leaving nothing', async () => {
    const source = new PassThrough();
    const staging = stageUnflushed(dir, source, { maxBytes: 1000 });
    source.write(Buffer.alloc(10));
    source.destroy(new Error('cut off'));
    await expect(staging).rejects.toThrow('cut off');
    expect(temps()).toEqual([]);
  });

  it('stages at most as many files at once as the gate lets in; one whose part failed while it waited fails, never hangs', async () => {
    const gate = new StagingGate(2);
    const sources = Array.from({ length: 4 }, () => new PassThrough());
    const read = () => sources.map((s) => s.listenerCount('data') > 0);
    const stagings = sources.map((source) => stageUnflushed(dir, source, { gate }));
    stagings.forEach((p) => p.catch(() => undefined));
    sources.forEach((s, i) => s.write(Buffer.from(`part ${i}`)));
    await new Promise((r) => setTimeout(r, 20));
    // The first two are being read; the others wait, unread.
    expect(read()).toEqual([true, true, false, false]);
    sources[2]!.on('error', () => undefined); // the form's parser listens in the host
    sources[2]!.destroy(new Error('the form failed'));
    sources[0]!.end();
    await expect(stagings[0]).resolves.toMatchObject({ bytes: 6 });
    await expect(stagings[2]).rejects.toThrow();
    sources[1]!.end();
    sources[3]!.end();
    await expect(stagings[1]).resolves.toMatchObject({ bytes: 6 });
    await expect(stagings[3]).resolves.toMatchObject({ bytes: 6 });
  });

  it('flushes many files with one file-system flush, and file by file where that is refused', async () => {
    const files = await Promise.all(
      Array.from({ length: 20 }, (_, i) => stageUnflushed(dir, Readable.from([Buffer.from(`f${i}`)]))),
    );
    expect(await flushFileSystems([dir])).toBe(process.platform === 'linux');
    // The neighbour that must fail: a folder that is not there cannot be flushed.
    expect(await flushFileSystems([path.join(dir, 'missing')])).toBe(false);
    await flushStaged(files);
    expect(files.every((f) => (f as { unflushed?: boolean }).unflushed === false)).toBe(true);
  });

  it('names the file a flush fails on (file by file), rather than taking it on trust', async () => {
    const files = await Promise.all(
      Array.from({ length: 20 }, (_, i) => stageUnflushed(dir, Readable.from([Buffer.from(`f${i}`)]))),
    );
    // Gone before its flush: the whole-file-system flush would not notice; the per-file one must.
    const gone = files[7]!;
    fs.rmSync(gone.tempPath);
    const path0 = process.env.PATH;
    process.env.PATH = dir; // no `sync` command here: the per-file fallback runs
    try {
      await expect(flushStaged(files)).rejects.toMatchObject({ code: 'ENOENT' });
    } finally {
      process.env.PATH = path0;
    }
  });

  it('fails a streamed file (past IN_MEMORY_BYTES) whose part is cut or fails, leaving nothing', async () => {
    for (const cut of [undefined, new Error('cut off')]) {
      const source = new PassThrough();
      source.on('error', () => undefined); // the form's parser listens in the host
      const staging = stageUnflushed(dir, source, { maxBytes: 10 * IN_MEMORY_BYTES });
      source.write(Buffer.alloc(IN_MEMORY_BYTES + 10, 3));
      await new Promise((r) => setTimeout(r, 20));
      source.destroy(cut);
      await expect(staging).rejects.toThrow(cut ? 'cut off' : 'ended before its end');
      expect(temps()).toEqual([]);
    }
  });

  it('gives a place back when a file is done: a gate of one takes one file after another', () => {
    const gate = new StagingGate(1);
    expect(gate.tryEnter()).toBe(true);
    expect(gate.tryEnter()).toBe(false);
    gate.leave();
    expect(gate.tryEnter()).toBe(true);
    gate.leave();
    expect(gate.tryEnter()).toBe(true);
  });

  it('keeps a file of exactly IN_MEMORY_BYTES in memory until its flush; one byte more is streamed and flushed', async () => {
    const at = await stageUnflushed(dir, chunked(Buffer.alloc(IN_MEMORY_BYTES, 1), [64 * 1024]));
    expect(at).toMatchObject({ bytes: IN_MEMORY_BYTES, unflushed: true });
    const over = await stageUnflushed(dir, chunked(Buffer.alloc(IN_MEMORY_BYTES + 1, 1), [64 * 1024]));
    expect(over.bytes).toBe(IN_MEMORY_BYTES + 1);
    expect((over as { unflushed?: boolean }).unflushed).toBeUndefined();
    // Nothing to flush is no flush at all; no folder is no file system.
    await flushStaged([over, undefined]);
    expect(await flushFileSystems([])).toBe(false);
  });

  it('stages in orIn, making no folder, when the folder asked for does not exist; in the folder when it does', async () => {
    const waiting = path.join(dir, 'staging');
    const missing = path.join(dir, 'new', 'deeper');
    for (const size of [10, IN_MEMORY_BYTES + 10]) {
      const data = Buffer.alloc(size, 7);
      const staged = await stageUnflushed(missing, chunked(data, [64 * 1024]), { orIn: waiting, maxBytes: size });
      expect(path.dirname(staged.tempPath)).toBe(waiting);
      expect(fs.existsSync(path.join(dir, 'new'))).toBe(false);
      expect(fs.readFileSync(staged.tempPath).equals(data)).toBe(true);
      fs.rmSync(staged.tempPath);
    }
    // The neighbour: a folder that exists is staged in, orIn or not.
    fs.mkdirSync(missing, { recursive: true });
    const beside = await stageUnflushed(missing, Readable.from([Buffer.from('x')]), { orIn: waiting });
    expect(path.dirname(beside.tempPath)).toBe(missing);
    // Without orIn the folder is made, as a single upload makes it.
    const made = await stageUnflushed(path.join(dir, 'made'), Readable.from([Buffer.from('y')]));
    expect(path.dirname(made.tempPath)).toBe(path.join(dir, 'made'));
  });

  it('removes every folder its files made when discarded together, however they shared them', async () => {
    const files = await Promise.all(
      ['a/b', 'a/c', 'a/c', 'a/b/d'].map((sub, i) =>
        stageUnflushed(path.join(dir, 'tree', sub), Readable.from([Buffer.from(`f${i}`)])),
      ),
    );
    await discardStaged(...files);
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('stages any size in any chunking whole, or refuses it exactly when over the limit (fuzz)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: IN_MEMORY_BYTES + 70_000 }),
        fc.array(fc.integer({ min: 1, max: 300_000 }), { maxLength: 12 }),
        fc.integer({ min: 0, max: IN_MEMORY_BYTES + 70_000 }),
        async (size, cuts, maxBytes) => {
          const data = Buffer.alloc(size, size & 0xff);
          const staging = stageUnflushed(dir, chunked(data, cuts), { maxBytes });
          if (size > maxBytes) await expect(staging).rejects.toBeInstanceOf(FileTooLargeError);
          else {
            const staged = await staging;
            expect(staged.bytes).toBe(size);
            expect(staged.sha256).toBe(sha(data));
            expect(fs.statSync(staged.tempPath).size).toBe(size);
            fs.rmSync(staged.tempPath);
          }
          expect(temps()).toEqual([]);
        },
      ),
      fuzzOptions(40),
    );
  });
});

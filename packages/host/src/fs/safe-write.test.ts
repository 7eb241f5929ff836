import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  FileTooLargeError,
  commitStaged,
  isTemporaryFileName,
  removeFilesTogether,
  stageCopy,
  stageStream,
  writeFileAtomic,
} from './safe-write.js';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-safe-write-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const list = (d = dir) => fs.readdirSync(d, { recursive: true, encoding: 'utf8' }).sort();
const temps = () => list().filter((f) => isTemporaryFileName(path.basename(f)));

describe('safe write', () => {
  it('writes a file whole and reports its size and sha256', async () => {
    const target = path.join(dir, 'a', 'b.txt');
    const result = await writeFileAtomic(target, 'hello');
    expect(fs.readFileSync(target, 'utf8')).toBe('hello');
    expect(result).toMatchObject({
      bytes: 5,
      sha256: '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824',
    });
    expect(temps()).toEqual([]);
  });

  it('accepts exactly maxBytes, refuses one more and leaves no temporary file or new folder', async () => {
    await expect(stageStream(dir, Readable.from([Buffer.alloc(10)]), { maxBytes: 10 })).resolves.toMatchObject({
      bytes: 10,
    });
    fs.rmSync(dir, { recursive: true });
    fs.mkdirSync(dir);
    const nested = path.join(dir, 'new', 'folder');
    await expect(
      stageStream(nested, Readable.from([Buffer.alloc(6), Buffer.alloc(5)]), { maxBytes: 10 }),
    ).rejects.toBeInstanceOf(FileTooLargeError);
    expect(list()).toEqual([]);
  });

  it('removes the temporary file when the source fails half-way', async () => {
    const source = new Readable({ read() {} });
    const staging = stageStream(dir, source);
    source.push(Buffer.alloc(1000));
    setTimeout(() => source.destroy(new Error('connection lost')), 20);
    await expect(staging).rejects.toThrow('connection lost');
    expect(list()).toEqual([]);
  });

  it('commits several targets or none: a failed rename puts the earlier targets back', async () => {
    const a = path.join(dir, 'a.txt');
    const b = path.join(dir, 'sub', 'b.txt');
    fs.writeFileSync(a, 'old a');
    const stagedA = await stageStream(dir, Readable.from(['new']));
    const stagedB = await stageCopy(path.dirname(b), stagedA);
    fs.rmSync(stagedB.tempPath); // the second rename will fail
    await expect(
      commitStaged([
        { staged: stagedA, target: a },
        { staged: stagedB, target: b },
      ]),
    ).rejects.toThrow();
    expect(fs.readFileSync(a, 'utf8')).toBe('old a');
    expect(fs.existsSync(b)).toBe(false);
    expect(temps()).toEqual([]);

    const newA = await stageStream(dir, Readable.from(['new']));
    const newB = await stageCopy(path.dirname(b), newA);
    expect(
      await commitStaged([
        { staged: newA, target: a },
        { staged: newB, target: b },
      ]),
    ).toEqual([true, false]);
    expect([fs.readFileSync(a, 'utf8'), fs.readFileSync(b, 'utf8')]).toEqual(['new', 'new']);
    expect(temps()).toEqual([]);
  });

  it('removes files together, never a folder', async () => {
    const a = path.join(dir, 'a.txt');
    fs.writeFileSync(a, 'a');
    fs.mkdirSync(path.join(dir, 'folder'));
    await expect(removeFilesTogether([a, path.join(dir, 'folder')])).rejects.toMatchObject({ code: 'EISDIR' });
    expect(fs.readFileSync(a, 'utf8')).toBe('a');
    expect(await removeFilesTogether([a, path.join(dir, 'missing.txt')])).toEqual([true, false]);
    expect(list()).toEqual(['folder']);
  });
});

describe('a big file flushed as it is staged', () => {
  it('keeps every byte in order while flushes run behind the writes', async () => {
    // 20 MiB in 64 KiB chunks, each chunk its own content: several flushes run on the way.
    const chunks = Array.from({ length: 320 }, (_, i) => Buffer.alloc(64 * 1024, `chunk ${i};`));
    const target = path.join(dir, 'big.bin');
    const result = await writeFileAtomic(target, Readable.from(chunks));
    const whole = Buffer.concat(chunks);
    expect(result.bytes).toBe(whole.length);
    expect(fs.readFileSync(target).equals(whole)).toBe(true);
    expect(temps()).toEqual([]);
  });
});

describe('a file read while it is replaced', () => {
  it('is always a whole old or a whole new file, over 100 replacements', async () => {
    const target = path.join(dir, 'page.html');
    // Distinct contents of different sizes: a torn or half-written file matches none of them.
    const versions = Array.from({ length: 101 }, (_, i) => Buffer.alloc(64 * 1024 + i * 101, `version ${i};`));
    fs.writeFileSync(target, versions[0]!);
    const known = new Set(versions.map((v) => v.toString('latin1')));
    let writing = true;
    let reads = 0;
    const torn: number[] = [];
    const reader = (async () => {
      while (writing) {
        const seen = await fs.promises.readFile(target);
        reads++;
        if (!known.has(seen.toString('latin1'))) torn.push(seen.length);
      }
    })();
    for (const version of versions.slice(1)) await writeFileAtomic(target, version);
    writing = false;
    await reader;
    expect(torn).toEqual([]);
    expect(reads).toBeGreaterThan(0);
    expect(fs.readFileSync(target).equals(versions[100]!)).toBe(true);
    expect(temps()).toEqual([]);
  });
});

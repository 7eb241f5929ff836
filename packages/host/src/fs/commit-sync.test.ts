import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { stageUnflushed } from './batch-staging.js';
import { commitStaged, commitStagedSync, discardStaged, stageStream } from './safe-write.js';
import { pathKey, targetLocks } from './keyed-lock.js';

// A batch's commit with plain calls (docs/sync.md "Speed"): the same outcome as the thread-pool
// way (the target replaced or created, its folder made in the order sent, a folder never
// replaced), and the thread-pool way whenever another write holds the target.
let dir: string;
let staging: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-commit-sync-'));
  staging = path.join(dir, '.staging');
  fs.mkdirSync(staging);
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const stage = (inDir: string, text: string) => stageStream(inDir, Readable.from([Buffer.from(text)]));
const names = (d: string) => fs.readdirSync(d).sort();

describe('commitStagedSync', () => {
  it('renames a file staged beside its target over it, and says a file was there', async () => {
    fs.writeFileSync(path.join(dir, 'a.html'), 'old');
    const staged = await stage(dir, 'new');
    expect(commitStagedSync(staged, path.join(dir, 'a.html'), new Set())).toBe(true);
    expect(fs.readFileSync(path.join(dir, 'a.html'), 'utf8')).toBe('new');
    expect(names(dir)).toEqual(['.staging', 'a.html']);
  });

  it('makes the missing folders of a file staged elsewhere and moves it straight to its target', async () => {
    const staged = await stage(staging, 'x');
    const made = new Set<string>();
    const target = path.join(dir, 'd1', 'd2', 'b.html');
    expect(commitStagedSync(staged, target, made)).toBe(false);
    expect(fs.readFileSync(target, 'utf8')).toBe('x');
    expect(made).toEqual(new Set([path.dirname(target)]));
    expect(names(staging)).toEqual([]);
    expect(names(path.dirname(target))).toEqual(['b.html']);
  });

  it('makes a folder again that was removed after this batch made it', async () => {
    const made = new Set<string>();
    const first = path.join(dir, 'd', 'one.html');
    expect(commitStagedSync(await stage(staging, '1'), first, made)).toBe(false);
    fs.rmSync(path.join(dir, 'd'), { recursive: true });
    const second = path.join(dir, 'd', 'two.html');
    expect(commitStagedSync(await stage(staging, '2'), second, made)).toBe(false);
    expect(names(path.join(dir, 'd'))).toEqual(['two.html']);
  });

  it('never replaces a folder, and leaves the staged file to its caller', async () => {
    fs.mkdirSync(path.join(dir, 'page.html'));
    const staged = await stage(dir, 'x');
    expect(() => commitStagedSync(staged, path.join(dir, 'page.html'), new Set())).toThrow(
      expect.objectContaining({ code: 'EISDIR' }),
    );
    expect(fs.statSync(path.join(dir, 'page.html')).isDirectory()).toBe(true);
    expect(fs.existsSync(staged.tempPath)).toBe(true);
    await discardStaged(staged);
  });

  it('removes the folders it made when the rename fails (a file stands where a folder must be)', async () => {
    // `d/x` must become a folder, but `d/x` is a file: mkdir fails before anything is made.
    fs.mkdirSync(path.join(dir, 'd'));
    fs.writeFileSync(path.join(dir, 'd', 'x'), 'file');
    const staged = await stage(staging, 'y');
    expect(() => commitStagedSync(staged, path.join(dir, 'd', 'x', 'y.html'), new Set())).toThrow(
      expect.objectContaining({ code: 'ENOTDIR' }),
    );
    // The rename fails into folders it made: they go again.
    const missingStage = { ...staged, tempPath: path.join(staging, 'gone.ack-tmp') };
    expect(() => commitStagedSync(missingStage, path.join(dir, 'e', 'f', 'z.html'), new Set())).toThrow(
      expect.objectContaining({ code: 'ENOENT' }),
    );
    expect(names(dir)).toEqual(['.staging', 'd']);
    await discardStaged(staged);
  });

  it('leaves a target another write holds to the thread-pool way (undefined), touching nothing', async () => {
    const target = path.join(dir, 'held.html');
    const staged = await stage(dir, 'mine');
    let release!: () => void;
    const holding = targetLocks.run([pathKey(target)], () => new Promise<void>((r) => (release = r)));
    await new Promise((r) => setImmediate(r));
    expect(commitStagedSync(staged, target, new Set())).toBeUndefined();
    expect(fs.existsSync(target)).toBe(false);
    release();
    await holding;
    // Its neighbour, a target nobody holds, commits at once.
    expect(commitStagedSync(await stage(dir, 'free'), path.join(dir, 'free.html'), new Set())).toBe(false);
    await commitStaged([{ staged, target }]);
    expect(fs.readFileSync(target, 'utf8')).toBe('mine');
  });
});

describe('a batch file staged from memory', () => {
  it('goes to the staging folder when its folder is missing, and names the folder as missing for the next', async () => {
    const missing = new Set<string>();
    const absent = path.join(dir, 'absent');
    const first = await stageUnflushed(absent, Readable.from([Buffer.from('1')]), { orIn: staging, missing });
    expect(path.dirname(first.tempPath)).toBe(staging);
    expect(missing).toEqual(new Set([absent]));
    // Made meanwhile: the batch still stages there (it commits by rename either way).
    fs.mkdirSync(absent);
    const second = await stageUnflushed(absent, Readable.from([Buffer.from('2')]), { orIn: staging, missing });
    expect(path.dirname(second.tempPath)).toBe(staging);
    // A folder not named missing is written into.
    const third = await stageUnflushed(dir, Readable.from([Buffer.from('3')]), { orIn: staging, missing });
    expect(path.dirname(third.tempPath)).toBe(dir);
    expect([first, second, third].map((f) => [f.bytes, fs.readFileSync(f.tempPath, 'utf8')])).toEqual([
      [1, '1'],
      [1, '2'],
      [1, '3'],
    ]);
    await discardStaged(first, second, third);
  });

  it('makes its folder when the staging folder is missing too', async () => {
    const target = path.join(dir, 'new', 'deep');
    const staged = await stageUnflushed(target, Readable.from([Buffer.from('x')]), {
      orIn: path.join(dir, 'no-staging'),
    });
    // Staged in the folder it made (in `orIn`, made for it), and both removed on discard.
    expect(fs.readFileSync(staged.tempPath, 'utf8')).toBe('x');
    await discardStaged(staged);
    expect(names(dir)).toEqual(['.staging']);
  });
});

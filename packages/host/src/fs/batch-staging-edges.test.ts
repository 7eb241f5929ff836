import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StagingGate, flushFileSystems, flushStaged, stageUnflushed } from './batch-staging.js';
import { isTemporaryFileName, type StagedFile } from './safe-write.js';

// What a batch relies on at the edges of staging (docs/sync.md "Speed"): a part that is gone is
// refused rather than waited for, a temporary file says which file it is for, and from 16 files on
// the files are made durable with one flush of their file system (docs/reliability.md
// "Mutation testing" lists what these tests kill).

/** Sets this process's file size limit (soft; `prlimit` from util-linux). */
const fileSizeLimit = (soft: string) =>
  execFileSync('prlimit', ['--pid', String(process.pid), `--fsize=${soft}:`], { stdio: 'ignore' });
/** The limit before the tests, put back after each even when one never ends (same process, other tests). */
const softLimit = execFileSync('prlimit', [
  '--pid',
  String(process.pid),
  '--fsize',
  '--raw',
  '--noheadings',
  '--output=SOFT',
])
  .toString()
  .trim();

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-batch-edges-'));
});
afterEach(() => {
  fileSizeLimit(softLimit);
  fs.rmSync(dir, { recursive: true, force: true });
});

const temps = () =>
  fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => isTemporaryFileName(path.basename(f)));
const stageAll = (folders: string[]) =>
  Promise.all(folders.map((sub, i) => stageUnflushed(path.join(dir, sub), Readable.from([Buffer.from(`f${i}`)]))));

describe('the edges of staging a batch', () => {
  it('refuses a part that ended before staging began, after its last event, rather than waiting for ever', async () => {
    const gone = new PassThrough();
    gone.destroy();
    await once(gone, 'close');
    await expect(stageUnflushed(dir, gone, { maxBytes: 1000 })).rejects.toThrow('ended before its end');
    expect(temps()).toEqual([]);
  });

  it('refuses a part whose form failed while it waited for the gate, and gives its place back once', async () => {
    const gate = new StagingGate(1);
    const first = new PassThrough();
    const waiting = new PassThrough();
    waiting.on('error', () => undefined); // the form's parser listens in the host
    const staging = [stageUnflushed(dir, first, { gate }), stageUnflushed(dir, waiting, { gate })];
    const closed = new Promise((r) => waiting.once('close', r));
    waiting.destroy(new Error('the form failed'));
    await closed;
    first.end('first');
    await expect(staging[0]).resolves.toMatchObject({ bytes: 5 });
    await expect(staging[1]).rejects.toThrow('ended before its end');
    // One place, free again, and only one.
    expect(gate.tryEnter()).toBe(true);
    expect(gate.tryEnter()).toBe(false);
    expect(temps()).toHaveLength(1);
  });

  it('names a temporary file after the file it is for, or "upload" without a name', async () => {
    const named = await stageUnflushed(dir, Readable.from([Buffer.from('x')]), { nameHint: 'site/page.html' });
    const unnamed = await stageUnflushed(dir, Readable.from([Buffer.from('y')]));
    expect(path.basename(named.tempPath).startsWith('.page.html.')).toBe(true);
    expect(path.basename(unnamed.tempPath).startsWith('.upload.')).toBe(true);
  });

  it('flushes 16 files or more with one flush of their file systems, fewer file by file', async () => {
    // A file removed before the flush shows which way the files were flushed: one by one, its
    // open fails (and names it); a whole-file-system flush does not look at single files.
    const removeOne = (files: StagedFile[]) => fs.rmSync(files[3]!.tempPath);
    const fewer = await stageAll(Array.from({ length: 15 }, (_, i) => `a${i % 2}`));
    removeOne(fewer);
    await expect(flushStaged(fewer)).rejects.toMatchObject({ code: 'ENOENT' });
    // Sixteen, in two folders: each folder's file system is flushed, so none is looked at alone.
    const sixteen = await stageAll(Array.from({ length: 16 }, (_, i) => `b${i % 2}`));
    removeOne(sixteen);
    const flushing = flushStaged(sixteen);
    if (process.platform === 'linux') {
      await flushing;
      expect(sixteen.every((f) => (f as { unflushed?: boolean }).unflushed === false)).toBe(true);
    } else await expect(flushing).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('leaves no temporary file, no folder it made and no open file when a write fails', async () => {
    // A file size limit on this process (as a quota or a full disk would) fails the write after
    // its first bytes (EFBIG; Node ignores the signal that comes with it).
    // Files this process holds open in the test's folder (a removed one shows as `... (deleted)`).
    const openHere = () =>
      fs.readdirSync('/proc/self/fd').filter((fd) => {
        try {
          return fs.readlinkSync(`/proc/self/fd/${fd}`).startsWith(dir);
        } catch {
          return false; // the listing's own descriptor, closed meanwhile
        }
      });
    const data = Buffer.alloc(100 * 1024, 5);
    fileSizeLimit(`${64 * 1024}`);
    try {
      const staging = stageUnflushed(path.join(dir, 'new', 'deeper'), Readable.from([data]));
      await expect(staging).rejects.toMatchObject({ code: 'EFBIG' });
    } finally {
      fileSizeLimit(softLimit);
    }
    expect(fs.readdirSync(dir)).toEqual([]);
    expect(openHere()).toEqual([]);
    // The neighbour under no limit is staged whole.
    const staged = await stageUnflushed(path.join(dir, 'new'), Readable.from([data]));
    expect(fs.readFileSync(staged.tempPath).equals(data)).toBe(true);
  });

  it('falls back to flushing file by file when the folders do not fit on a command line', async () => {
    // One argument longer than the system takes: the command cannot start (E2BIG, thrown at once).
    expect(await flushFileSystems([`/${'a'.repeat(200_000)}`])).toBe(false);
  });
});

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  FileTooLargeError,
  commitStaged,
  discardStaged,
  isTemporaryFileName,
  moveStaged,
  removeFilesTogether,
  stageStream,
  writeFileAtomic,
} from './safe-write.js';

// Safe writes at their edges (docs/sync.md "Writes"): temporary files are dotfiles beside the
// target that the sweep recognises, a write never replaces a folder, and no temporary file or
// backup is left behind whichever way a write ends.
let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-safe-write-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const list = () => (fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }) as string[]).sort();

describe('temporary files', () => {
  it('are dotfiles in the target folder with a safe, bounded name, whatever the name hint', async () => {
    const staged = await stageStream(dir, Readable.from(['x']), {
      nameHint: `../../etc/pa ss;wd ${'é'.repeat(100)}.html`,
    });
    expect(path.dirname(staged.tempPath)).toBe(dir);
    const name = path.basename(staged.tempPath);
    // A random part, then the writer (docs/sync.md "Interrupted writes"), then a counter.
    expect(name).toMatch(/^\.[A-Za-z0-9_.-]{1,60}\.[0-9a-f]{8}([0-9a-f]{8}|0)-[0-9a-z]+-[0-9a-z]+\.ack-tmp$/);
    expect(name).toContain(`-${process.pid.toString(36)}-`);
    expect(name.startsWith('.pa_ss_wd_')).toBe(true);
    expect(isTemporaryFileName(name)).toBe(true);
    // Each write has its own name, however alike the hints.
    const again = await stageStream(dir, Readable.from(['y']), {
      nameHint: `../../etc/pa ss;wd ${'é'.repeat(100)}.html`,
    });
    expect(again.tempPath).not.toBe(staged.tempPath);
    await discardStaged(staged, again);
    expect(list()).toEqual([]);
  });

  it('are told apart from ordinary files by their leading dot and their suffix', () => {
    expect(isTemporaryFileName('.page.html.0123456789ab.ack-tmp')).toBe(true);
    expect(isTemporaryFileName('page.html.ack-tmp')).toBe(false);
    expect(isTemporaryFileName('.page.html')).toBe(false);
    expect(isTemporaryFileName('.ack-tmp.page.html')).toBe(false);
    expect(isTemporaryFileName('page.html')).toBe(false);
  });

  it('a body over the limit fails with the limit named, and leaves nothing', async () => {
    const failure = await stageStream(dir, Readable.from(['four']), { maxBytes: 3 }).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(FileTooLargeError);
    expect(failure).toMatchObject({ name: 'FileTooLargeError', limit: 3, message: 'The file is over 3 bytes.' });
    expect(list()).toEqual([]);
  });
});

describe('moveStaged', () => {
  it('keeps a staged file already in the folder, and moves one staged elsewhere, content and all', async () => {
    const staged = await stageStream(dir, Readable.from(['content']));
    expect(path.basename(staged.tempPath).startsWith('.upload.')).toBe(true); // the default name hint
    expect(await moveStaged(staged, dir)).toBe(staged);
    const other = path.join(dir, 'other');
    const moved = await moveStaged(staged, other);
    expect(path.dirname(moved.tempPath)).toBe(other);
    expect(isTemporaryFileName(path.basename(moved.tempPath))).toBe(true);
    expect(moved).toMatchObject({ bytes: staged.bytes, sha256: staged.sha256 });
    expect(fs.readFileSync(moved.tempPath, 'utf8')).toBe('content');
    expect(fs.existsSync(staged.tempPath)).toBe(false);
    await discardStaged(moved);
    expect(list()).toEqual([]); // the folder made for it goes too
  });
});

describe('moveStaged across file systems', () => {
  it('copies a staged file where a rename cannot reach (EXDEV), and leaves nothing behind', async () => {
    // /dev/shm is a tmpfs on Linux, another file system than the temp folder; elsewhere this is a rename.
    const elsewhere = fs.mkdtempSync(path.join(fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir(), 'ack-move-'));
    try {
      const staged = await stageStream(dir, Readable.from(['across']));
      const moved = await moveStaged(staged, path.join(elsewhere, 'sub'));
      expect(path.dirname(moved.tempPath)).toBe(path.join(elsewhere, 'sub'));
      expect(fs.readFileSync(moved.tempPath, 'utf8')).toBe('across');
      expect(moved).toMatchObject({ bytes: 6, sha256: staged.sha256 });
      expect(list()).toEqual([]);
      await discardStaged(moved);
      expect(fs.readdirSync(elsewhere)).toEqual([]);
    } finally {
      fs.rmSync(elsewhere, { recursive: true, force: true });
    }
  });
});

describe('writeFileAtomic', () => {
  it('keeps the old file whole when the new content is over the limit', async () => {
    const target = path.join(dir, 'f.txt');
    fs.writeFileSync(target, 'old');
    await expect(writeFileAtomic(target, 'too long', { maxBytes: 3 })).rejects.toBeInstanceOf(FileTooLargeError);
    expect(fs.readFileSync(target, 'utf8')).toBe('old');
    expect(list()).toEqual(['f.txt']);
  });

  it('writes text, bytes or a stream whole', async () => {
    const target = path.join(dir, 'f.txt');
    expect(await writeFileAtomic(target, 'text é')).toMatchObject({ bytes: 7, tempPath: target });
    expect(fs.readFileSync(target, 'utf8')).toBe('text é');
    await writeFileAtomic(target, Buffer.from([1, 2, 3]));
    expect([...fs.readFileSync(target)]).toEqual([1, 2, 3]);
    await writeFileAtomic(target, Readable.from([Buffer.from('a'), Buffer.from('b')]));
    expect(fs.readFileSync(target, 'utf8')).toBe('ab');
    expect(list()).toEqual(['f.txt']);
  });
});

describe('commitStaged', () => {
  it('never replaces a folder: the folder stays, the staged file is gone', async () => {
    const folder = path.join(dir, 'folder');
    fs.mkdirSync(folder);
    fs.writeFileSync(path.join(folder, 'inside.txt'), 'kept');
    const staged = await stageStream(dir, Readable.from(['new']));
    await expect(commitStaged([{ staged, target: folder }])).rejects.toMatchObject({ code: 'EISDIR' });
    expect(fs.readFileSync(path.join(folder, 'inside.txt'), 'utf8')).toBe('kept');
    expect(list()).toEqual(['folder', path.join('folder', 'inside.txt')]);
  });

  it('a failed commit of several targets puts every earlier one back and leaves no backup copy', async () => {
    const a = path.join(dir, 'a.txt');
    const b = path.join(dir, 'b.txt');
    const folder = path.join(dir, 'c');
    fs.writeFileSync(a, 'old a');
    fs.writeFileSync(b, 'old b');
    fs.mkdirSync(folder);
    const staged = await Promise.all(['new a', 'new b', 'new c'].map((t) => stageStream(dir, Readable.from([t]))));
    await expect(
      commitStaged([
        { staged: staged[0]!, target: a },
        { staged: staged[1]!, target: b },
        { staged: staged[2]!, target: folder },
      ]),
    ).rejects.toMatchObject({ code: 'EISDIR' });
    expect([fs.readFileSync(a, 'utf8'), fs.readFileSync(b, 'utf8')]).toEqual(['old a', 'old b']);
    expect(list()).toEqual(['a.txt', 'b.txt', 'c']);
  });

  it('a rename failing after others puts back exactly the targets renamed, and leaves the rest alone', async () => {
    const names = ['a.txt', 'b.txt', 'c.txt', 'd.txt'];
    const targets = names.map((n) => path.join(dir, n));
    for (const t of targets.slice(0, 3)) fs.writeFileSync(t, `old ${path.basename(t)}`);
    const staged = await Promise.all(names.map((n) => stageStream(dir, Readable.from([`new ${n}`]))));
    fs.rmSync(staged[2]!.tempPath); // the third rename fails
    await expect(commitStaged(staged.map((s, i) => ({ staged: s, target: targets[i]! })))).rejects.toMatchObject({
      code: 'ENOENT',
    });
    expect(targets.slice(0, 3).map((t) => fs.readFileSync(t, 'utf8'))).toEqual(['old a.txt', 'old b.txt', 'old c.txt']);
    expect(list()).toEqual(['a.txt', 'b.txt', 'c.txt']);
  });

  it('a successful commit of several existing targets leaves no backup copy', async () => {
    const a = path.join(dir, 'a.txt');
    const b = path.join(dir, 'b.txt');
    fs.writeFileSync(a, 'old a');
    fs.writeFileSync(b, 'old b');
    const staged = await Promise.all(['new a', 'new b'].map((t) => stageStream(dir, Readable.from([t]))));
    expect(
      await commitStaged([
        { staged: staged[0]!, target: a },
        { staged: staged[1]!, target: b },
      ]),
    ).toEqual([true, true]);
    expect([fs.readFileSync(a, 'utf8'), fs.readFileSync(b, 'utf8')]).toEqual(['new a', 'new b']);
    expect(list()).toEqual(['a.txt', 'b.txt']);
  });
});

describe('removeFilesTogether', () => {
  it('puts every file back when one target is a folder, in any position, and leaves no renamed copy', async () => {
    const files = ['a.txt', 'b.txt'].map((n) => path.join(dir, n));
    for (const f of files) fs.writeFileSync(f, path.basename(f));
    fs.mkdirSync(path.join(dir, 'z'));
    await expect(removeFilesTogether([...files, path.join(dir, 'z')])).rejects.toMatchObject({ code: 'EISDIR' });
    expect(list()).toEqual(['a.txt', 'b.txt', 'z']);
    expect(files.map((f) => fs.readFileSync(f, 'utf8'))).toEqual(['a.txt', 'b.txt']);
  });

  it('puts the files back when a folder follows a target that was not there', async () => {
    const a = path.join(dir, 'a.txt');
    fs.writeFileSync(a, 'a');
    fs.mkdirSync(path.join(dir, 'z'));
    await expect(removeFilesTogether([a, path.join(dir, 'missing.txt'), path.join(dir, 'z')])).rejects.toMatchObject({
      code: 'EISDIR',
    });
    expect(fs.readFileSync(a, 'utf8')).toBe('a');
    expect(list()).toEqual(['a.txt', 'z']);
  });

  it('removes without leaving renamed copies, and takes a path through a file as not there', async () => {
    const a = path.join(dir, 'a.txt');
    fs.writeFileSync(a, 'a');
    expect(await removeFilesTogether([path.join(a, 'below'), a])).toEqual([false, true]);
    expect(list()).toEqual([]);
  });
});

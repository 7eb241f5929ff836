import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkNoSymlinkEscape, resolveContainedPath } from './contained-path.js';

// Contained paths at their edges (docs/static-files.md, docs/sync.md): a drive letter is refused
// only at the start, the root folder itself counts as inside, and a symlink loop is an error,
// never taken for "inside".
const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});
const tempRoot = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-contained-'));
  made.push(dir);
  return dir;
};

describe('resolveContainedPath', () => {
  it('refuses a drive letter at the start only: a colon further on is part of a file name', () => {
    expect(resolveContainedPath('/srv/root', 'c:/windows')).toEqual({ ok: false, reason: 'drive-letter' });
    expect(resolveContainedPath('/srv/root', '/C:x')).toEqual({ ok: false, reason: 'drive-letter' });
    for (const name of ['logs/report 10:30.txt', 'logs/ratio a:b.txt'])
      expect(resolveContainedPath('/srv/root', name), name).toMatchObject({ ok: true, relative: name });
  });
});

describe('checkNoSymlinkEscape', () => {
  it('counts the root itself, and what is below it, as inside', async () => {
    const root = tempRoot();
    expect(await checkNoSymlinkEscape(root, root)).toBe(true);
    expect(await checkNoSymlinkEscape(root, path.join(root, 'not', 'yet', 'there.txt'))).toBe(true);
    expect(await checkNoSymlinkEscape(root, `${root}-sibling/file`)).toBe(false);
  });

  it('judges a path through a file (not a folder) by the part that exists', async () => {
    const root = tempRoot();
    fs.writeFileSync(path.join(root, 'file.txt'), 'x');
    expect(await checkNoSymlinkEscape(root, path.join(root, 'file.txt', 'below'))).toBe(true);
  });

  it('fails on a symlink loop instead of taking the path for inside', async () => {
    const root = tempRoot();
    fs.symlinkSync(path.join(root, 'b'), path.join(root, 'a'));
    fs.symlinkSync(path.join(root, 'a'), path.join(root, 'b'));
    await expect(checkNoSymlinkEscape(root, path.join(root, 'a', 'file.txt'))).rejects.toMatchObject({
      code: 'ELOOP',
    });
  });
});

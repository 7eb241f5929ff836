import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkNoSymlinkEscape, resolveContainedPath } from './contained-path.js';

const root = path.resolve(os.tmpdir(), 'ack-root');

describe('resolveContainedPath', () => {
  it('resolves a path inside the root, with / or \\ separators and a leading / dropped', () => {
    for (const given of [
      'HDS/a.html',
      '/HDS/a.html',
      '\\HDS\\a.html',
      'HDS\\a.html',
      './HDS//a.html',
      'HDS/./a.html',
    ]) {
      expect(resolveContainedPath(root, given), given).toEqual({
        ok: true,
        absolute: path.join(root, 'HDS', 'a.html'),
        relative: 'HDS/a.html',
      });
    }
  });

  it('keeps names that only look like traversal, and other characters, as they are', () => {
    expect(resolveContainedPath(root, '..a/b..')).toMatchObject({ ok: true, relative: '..a/b..' });
    expect(resolveContainedPath(root, '...')).toMatchObject({ ok: true, relative: '...' });
    expect(resolveContainedPath(root, 'a b/ü%2e.txt')).toMatchObject({ ok: true, relative: 'a b/ü%2e.txt' });
    // the nearest neighbours of the refused control characters are ordinary name characters
    for (const name of ['a b', 'a~b', 'a\u00a0b', 'a\u00a1b'])
      expect(resolveContainedPath(root, name), JSON.stringify(name)).toMatchObject({ ok: true, relative: name });
  });

  it('refuses rather than clamps, saying why', () => {
    const cases: Array<[string, string]> = [
      ['', 'empty'],
      ['/', 'empty'],
      ['.', 'empty'],
      ['./', 'empty'],
      ['a\0b', 'nul'],
      ['a\u0001b', 'control-character'],
      ['HDS/\u001f.html', 'control-character'],
      ['a\nb', 'control-character'],
      ['a\u007fb', 'control-character'],
      ['a\u0080b', 'control-character'],
      ['a\u009fb', 'control-character'],
      ['C:/x', 'drive-letter'],
      ['c:x', 'drive-letter'],
      ['/C:\\x', 'drive-letter'],
      ['//server/share/x', 'unc'],
      ['\\\\server\\share\\x', 'unc'],
      ['..', 'traversal'],
      ['../x', 'traversal'],
      ['a/../../x', 'traversal'],
      ['a/..', 'traversal'],
      ['a\\..\\x', 'traversal'],
    ];
    for (const [given, reason] of cases)
      expect(resolveContainedPath(root, given), JSON.stringify(given)).toEqual({ ok: false, reason });
  });

  it('does not decode percent-encoding (the caller decodes once)', () => {
    expect(resolveContainedPath(root, '%2e%2e/x')).toMatchObject({ ok: true, relative: '%2e%2e/x' });
  });
});

describe('checkNoSymlinkEscape', () => {
  let base: string;
  beforeEach(() => {
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ack-contained-')));
    fs.mkdirSync(path.join(base, 'root', 'inside'), { recursive: true });
    fs.mkdirSync(path.join(base, 'outside'));
  });
  afterEach(() => fs.rmSync(base, { recursive: true, force: true }));

  it('accepts paths inside the root, existing or not, and a root that does not exist yet', async () => {
    const r = path.join(base, 'root');
    expect(await checkNoSymlinkEscape(r, path.join(r, 'inside', 'a.txt'))).toBe(true);
    expect(await checkNoSymlinkEscape(r, path.join(r, 'new', 'deep', 'a.txt'))).toBe(true);
    expect(await checkNoSymlinkEscape(path.join(base, 'later'), path.join(base, 'later', 'a.txt'))).toBe(true);
  });

  it('refuses a path through a symlink that leads out of the root, and follows one that stays in', async () => {
    const r = path.join(base, 'root');
    fs.symlinkSync(path.join(base, 'outside'), path.join(r, 'out'));
    fs.symlinkSync(path.join(r, 'inside'), path.join(r, 'alias'));
    expect(await checkNoSymlinkEscape(r, path.join(r, 'out', 'a.txt'))).toBe(false);
    expect(await checkNoSymlinkEscape(r, path.join(r, 'out', 'new', 'a.txt'))).toBe(false);
    expect(await checkNoSymlinkEscape(r, path.join(r, 'alias', 'a.txt'))).toBe(true);
  });

  it('accepts a root that is itself reached through a symlink', async () => {
    fs.symlinkSync(path.join(base, 'root'), path.join(base, 'linked-root'));
    const r = path.join(base, 'linked-root');
    expect(await checkNoSymlinkEscape(r, path.join(r, 'inside', 'a.txt'))).toBe(true);
  });
});

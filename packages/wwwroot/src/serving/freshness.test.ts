import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWwwroot, type WwwrootFixture } from '../test-support/test-fixture.js';
import { createFreshness } from './freshness.js';

// A cached file is trusted without a stat while its folders are watched: these check that a file
// changed on disk, by this process or another, is still served new on the very next request.

const ROOT = 'modules/wwwroot/wwwroot';
let t: WwwrootFixture;
let root: string;

beforeAll(async () => {
  t = await startWwwroot({
    files: {
      [`${ROOT}/a/page.txt`]: 'first',
      [`${ROOT}/Deep/Folder/item.txt`]: 'old tree',
      [`${ROOT}/child.txt`]: 'before child',
    },
  });
  root = path.join(t.home.home, ROOT);
});
afterAll(() => t?.close());

const text = async (p: string) => (await fetch(`${t.url}${p}`)).text();

describe('a cached file changed on disk', () => {
  it('is served new on the next request after an in-place edit that keeps size and mtime', async () => {
    const file = path.join(root, 'a/page.txt');
    expect(await text('/a/page.txt')).toBe('first');
    expect(await text('/a/page.txt')).toBe('first');
    const { mtime } = fs.statSync(file);
    const fd = fs.openSync(file, 'r+');
    fs.writeSync(fd, 'FIRST', 0);
    fs.closeSync(fd);
    fs.utimesSync(file, mtime, mtime);
    expect(await text('/a/page.txt')).toBe('FIRST');
  });

  it('is served new after another process wrote it', async () => {
    expect(await text('/child.txt')).toBe('before child');
    const file = path.join(root, 'child.txt');
    execFileSync(process.execPath, [
      '-e',
      `require('fs').writeFileSync(${JSON.stringify(file)}, 'written by a child')`,
    ]);
    expect(await text('/child.txt')).toBe('written by a child');
  });

  it('is served new when a folder above it is replaced (by any case of its URL)', async () => {
    expect(await text('/deep/folder/ITEM.txt')).toBe('old tree');
    expect(await text('/deep/folder/ITEM.txt')).toBe('old tree');
    fs.renameSync(path.join(root, 'Deep'), path.join(root, 'Deep-old'));
    fs.mkdirSync(path.join(root, 'Deep/Folder'), { recursive: true });
    fs.writeFileSync(path.join(root, 'Deep/Folder/item.txt'), 'new tree');
    expect(await text('/deep/folder/ITEM.txt')).toBe('new tree');
    fs.rmSync(path.join(root, 'Deep'), { recursive: true });
    expect((await fetch(`${t.url}/deep/folder/ITEM.txt`)).status).toBe(404);
  });
});

describe('createFreshness', () => {
  const until = async (check: () => boolean) => {
    for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
    return check();
  };

  it('keeps a stamp while nothing changes and drops it on a change in the folder or above', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-freshness-'));
    const freshness = createFreshness();
    try {
      fs.mkdirSync(path.join(dir, 'sub'));
      fs.writeFileSync(path.join(dir, 'sub/x.txt'), 'x');
      const stamp = freshness.stamp(path.join(dir, 'sub'))!;
      expect(stamp).toBeDefined();
      expect(freshness.unchanged(stamp)).toBe(true);
      fs.writeFileSync(path.join(dir, 'sub/x.txt'), 'y');
      expect(await until(() => !freshness.unchanged(stamp))).toBe(true);

      const again = freshness.stamp(path.join(dir, 'sub'))!;
      fs.renameSync(path.join(dir, 'sub'), path.join(dir, 'gone'));
      expect(await until(() => !freshness.unchanged(again))).toBe(true);
    } finally {
      freshness.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('gives no stamp when a folder cannot be watched, so callers validate by stat', () => {
    const none = createFreshness(0);
    expect(none.stamp(os.tmpdir())).toBeUndefined();
    const freshness = createFreshness();
    expect(freshness.stamp(path.join(os.tmpdir(), 'no-such-folder-ack'))).toBeUndefined();
    freshness.close();
  });
});

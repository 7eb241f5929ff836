import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWwwroot, type WwwrootFixture } from '../test-support/test-fixture.js';

// A static root that is a symlink switched to another release folder (`ln -sfn`, or
// `ln -s new tmp && mv -T tmp cur` as Capistrano does) serves the new tree on the next request:
// new files, removed files, changed files, by any case (docs/static-files.md "Symlinked release
// folders"). The releases are stamped with one time, as `cp -a`, `rsync -t` or a tar extract
// leave them: a folder's mtime alone cannot tell the two trees apart.

let t: WwwrootFixture;
let base: string;
const STAMP = new Date('2026-01-02T03:04:05Z');

function release(name: string, files: Record<string, string>): string {
  const dir = path.join(base, 'releases', name);
  for (const [rel, body] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), body);
  }
  const stampTree = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) stampTree(path.join(d, e.name));
      fs.utimesSync(path.join(d, e.name), STAMP, STAMP);
    }
    fs.utimesSync(d, STAMP, STAMP);
  };
  stampTree(dir);
  return dir;
}

const current = () => path.join(base, 'current');
/** `ln -s new tmp && mv -T tmp current`: one rename over the old link. */
function switchByRename(to: string): void {
  const tmp = path.join(base, 'current.tmp');
  fs.symlinkSync(to, tmp);
  fs.renameSync(tmp, current());
}
/** `ln -sfn new current` as a shell without rename does it: the link removed, then made again. */
function switchByRelink(to: string): void {
  fs.unlinkSync(current());
  fs.symlinkSync(to, current());
}

const get = (p: string, headers: Record<string, string> = {}) => fetch(`${t.url}${p}`, { headers });

beforeAll(async () => {
  base = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-symlinked-root-'));
  // Same sizes in both releases, so a size or mtime compare alone would call them unchanged.
  release('r1', {
    'index.html': 'release 1',
    'app/main.js': 'main 1',
    'only-in-1.html': 'old',
    'Case/Page.html': 'page 1',
  });
  release('r2', {
    'index.html': 'release 2',
    'app/main.js': 'main 2',
    'only-in-2.html': 'new',
    'Case/Page.html': 'page 2',
  });
  fs.symlinkSync(path.join(base, 'releases', 'r1'), current());
  t = await startWwwroot({ moduleConfig: { WWWRootBasePath: current() } });
});
afterAll(async () => {
  await t?.close();
  fs.rmSync(base, { recursive: true, force: true });
});

async function expectRelease(n: 1 | 2): Promise<void> {
  const other = n === 1 ? 2 : 1;
  expect(await (await get('/')).text()).toBe(`release ${n}`);
  expect(await (await get('/app/main.js')).text()).toBe(`main ${n}`);
  expect(await (await get('/case/page.html')).text()).toBe(`page ${n}`);
  expect((await get(`/only-in-${n}.html`)).status).toBe(200);
  expect((await get(`/only-in-${other}.html`)).status).toBe(404);
}

describe('a static root switched by symlink', () => {
  it('serves the new release on the next request, new files included, removed files 404, across switches', async () => {
    const r1 = path.join(base, 'releases', 'r1');
    const r2 = path.join(base, 'releases', 'r2');
    for (let i = 0; i < 6; i++) {
      await expectRelease(1);
      await expectRelease(1); // cached answers, then the switch
      if (i % 2 === 0) switchByRename(r2);
      else switchByRelink(r2);
      await expectRelease(2);
      await expectRelease(2);
      if (i % 2 === 0) switchByRelink(r1);
      else switchByRename(r1);
    }
  });

  it('gives no stale 304: an ETag of the old release does not match the new file', async () => {
    switchByRename(path.join(base, 'releases', 'r1'));
    const first = await get('/app/main.js');
    expect(await first.text()).toBe('main 1');
    const etag = first.headers.get('etag')!;
    expect((await get('/app/main.js', { 'if-none-match': etag })).status).toBe(304);
    switchByRename(path.join(base, 'releases', 'r2'));
    const after = await get('/app/main.js', { 'if-none-match': etag });
    expect(after.status).toBe(200);
    expect(await after.text()).toBe('main 2');
    expect(after.headers.get('etag')).not.toBe(etag);
  });

  it('compressed copies follow the switch', async () => {
    const big = (n: number) => `<p>release ${n}</p>\n`.repeat(200);
    release('z1', { 'z.html': big(1) });
    release('z2', { 'z.html': big(2) });
    switchByRename(path.join(base, 'releases', 'z1'));
    const gz = { 'accept-encoding': 'gzip' };
    expect(await (await get('/z.html', gz)).text()).toBe(big(1));
    switchByRename(path.join(base, 'releases', 'z2'));
    expect(await (await get('/z.html', gz)).text()).toBe(big(2));
  });
});

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ReleaseError, ReleaseStore } from './index.js';
import { writeByRename as write } from '../test-support/release-tree.js';

// The release store over a real folder (docs/releases.md).

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-releases-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const read = (rel: string): string => fs.readFileSync(path.join(dir, rel), 'utf8');

async function push(store: ReleaseStore, prefix: string, files: Record<string, string>, remove: string[] = []) {
  const s = await store.stage(prefix, { by: 'deploy' });
  write(s.dir, files);
  for (const r of remove) fs.rmSync(path.join(s.dir, r));
  return store.commit(prefix, s.id);
}

describe('release store', () => {
  it('switches a prefix to a staged tree, keeps unchanged files as hard links, lists history', async () => {
    const store = new ReleaseStore({ contractDir: dir });
    const r1 = await push(store, 'HDS/', { 'a.html': 'one', 'js/app.js': 'A1' });
    expect(read('HDS/a.html')).toBe('one');
    expect(fs.lstatSync(path.join(dir, 'HDS')).isSymbolicLink()).toBe(true);
    const r2 = await push(store, 'HDS/', { 'a.html': 'two' });
    expect(read('HDS/a.html')).toBe('two');
    expect(read('HDS/js/app.js')).toBe('A1');
    const home = path.join(dir, '.ack-releases', 'HDS');
    expect(fs.statSync(path.join(home, r1.id, 'js/app.js')).ino).toBe(
      fs.statSync(path.join(home, r2.id, 'js/app.js')).ino,
    );
    expect(fs.readFileSync(path.join(home, r1.id, 'a.html'), 'utf8')).toBe('one');
    const list = await store.list('HDS/');
    expect(list.map((r) => [r.id, r.live, r.files, r.by])).toEqual([
      [r2.id, true, 2, 'deploy'],
      [r1.id, false, 2, 'deploy'],
    ]);
    expect(list[0]?.digest).not.toBe(list[1]?.digest);
  });

  it('rolls back to the previous release and to a named one, digest for digest', async () => {
    const store = new ReleaseStore({ contractDir: dir });
    const r1 = await push(store, 'HDS/', { 'a.html': 'one' });
    const r2 = await push(store, 'HDS/', { 'a.html': 'two', 'b.html': 'new' });
    await push(store, 'HDS/', { 'a.html': 'three' });
    const back = await store.rollback('HDS/');
    expect(back.id).toBe(r2.id);
    expect(read('HDS/a.html')).toBe('two');
    const again = await store.rollback('HDS/', r1.id);
    expect(again.digest).toBe(r1.digest);
    expect(fs.existsSync(path.join(dir, 'HDS/b.html'))).toBe(false);
    await expect(store.rollback('HDS/', 'r-none')).rejects.toMatchObject({ status: 404, code: 'release.not_found' });
    // Nothing older than the oldest.
    await expect(store.rollback('HDS/')).rejects.toMatchObject({ code: 'release.not_found' });
  });

  it('refuses a nested prefix with 409, and accepts a sibling that only shares letters', async () => {
    const store = new ReleaseStore({ contractDir: dir });
    await push(store, 'HDS/', { 'a.html': 'x' });
    for (const nested of ['HDS/TST/', '/HDS\\TST']) {
      const err = await store.stage(nested).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ReleaseError);
      expect(err).toMatchObject({ status: 409, code: 'release.nested_prefix' });
    }
    await push(store, 'HDSX/', { 'a.html': 'y' });
    expect(read('HDSX/a.html')).toBe('y');
    await push(store, 'OTHER/TST/', { 'b.html': 'z' });
    await expect(store.stage('OTHER/')).rejects.toMatchObject({ status: 409 });
    await expect(store.stage('../x')).rejects.toMatchObject({ status: 400, code: 'release.bad_prefix' });
    await expect(store.stage('HDS/', { id: '../x' })).rejects.toMatchObject({ status: 400, code: 'release.bad_id' });
  });

  it('adopts a prefix that is a real folder as its first release', async () => {
    write(dir, { 'HDS/old.html': 'before' });
    const store = new ReleaseStore({ contractDir: dir });
    await push(store, 'HDS/', { 'new.html': 'after' });
    expect(read('HDS/old.html')).toBe('before');
    const list = await store.list('HDS/');
    expect(list).toHaveLength(2);
    expect(list[1]).toMatchObject({ files: 1, live: false });
  });

  it('keeps Releases:Keep releases, the live one always', async () => {
    const store = new ReleaseStore({ contractDir: dir, keep: 2, graceMs: 0 });
    for (let i = 0; i < 4; i++) await push(store, 'HDS/', { 'a.html': String(i) });
    const list = await store.list('HDS/');
    expect(list.map((r) => r.live)).toEqual([true, false]);
    // Each kept release: its folder, its manifest and its files' digests; nothing of the pruned.
    const names = fs.readdirSync(path.join(dir, '.ack-releases', 'HDS')).sort();
    expect(names).toEqual(list.flatMap((r) => [r.id, `${r.id}.json`, `${r.id}.sums`]).sort());
  });

  it('serves a removed file from the previous release within the grace period only', async () => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    const store = new ReleaseStore({ contractDir: dir, now: () => now, graceMs: 600_000 });
    await push(store, 'HDS/', { 'chunk-1.js': 'old chunk', 'a.html': 'one' });
    now += 1000;
    await push(store, 'HDS/', { 'a.html': 'two' }, ['chunk-1.js']);
    expect(fs.existsSync(path.join(dir, 'HDS/chunk-1.js'))).toBe(false);
    const old = await store.graceLookup('HDS/', 'chunk-1.js');
    expect(old && fs.readFileSync(old, 'utf8')).toBe('old chunk');
    expect(await store.graceLookup('HDS/', 'a.html')).toBeNull(); // the live one has it
    expect(await store.graceLookup('HDS/', '../HDS/chunk-1.js')).toBeNull();
    now += 600_000;
    expect(await store.graceLookup('HDS/', 'chunk-1.js')).toBeNull();
  });

  it('records a one-file change of the live release in its history', async () => {
    const store = new ReleaseStore({ contractDir: dir });
    const r1 = await push(store, 'HDS/', { 'a.html': 'one' });
    write(path.join(dir, 'HDS'), { 'b.html': 'by hand' });
    await store.noteOneFileChange('HDS/', 'HDS/b.html', 'Created');
    const [live] = await store.list('HDS/');
    expect(live).toMatchObject({ id: r1.id, files: 2, edits: [{ path: 'HDS/b.html', change: 'Created' }] });
    expect(live?.digest).not.toBe(r1.digest);
  });

  it('discards a staged release without touching the live one', async () => {
    const store = new ReleaseStore({ contractDir: dir });
    await push(store, 'HDS/', { 'a.html': 'one' });
    const s = await store.stage('HDS/');
    write(s.dir, { 'a.html': 'never' });
    expect(await store.discard('HDS/', s.id)).toBe(true);
    expect(read('HDS/a.html')).toBe('one');
    await expect(store.commit('HDS/', s.id)).rejects.toMatchObject({ status: 404, code: 'release.not_staged' });
  });

  it('refuses to commit a stage whose live release moved since, so that no change made meanwhile is lost', async () => {
    const store = new ReleaseStore({ contractDir: dir });
    await push(store, 'HDS/', { 'a.html': 'one', 'b.html': 'one' });
    // Two pushes staged on the same live release: the first to commit wins.
    const first = await store.stage('HDS/');
    const second = await store.stage('HDS/');
    write(first.dir, { 'a.html': 'first' });
    write(second.dir, { 'b.html': 'second' });
    await store.commit('HDS/', first.id);
    await expect(store.commit('HDS/', second.id)).rejects.toMatchObject({ status: 409, code: 'release.live_moved' });
    expect(read('HDS/a.html')).toBe('first');
    expect(read('HDS/b.html')).toBe('one');
    // Its neighbour: staged again on the new live release, it commits with both changes.
    expect(await store.discard('HDS/', second.id)).toBe(true);
    const again = await store.stage('HDS/');
    write(again.dir, { 'b.html': 'second' });
    await store.commit('HDS/', again.id);
    expect([read('HDS/a.html'), read('HDS/b.html')]).toEqual(['first', 'second']);

    // A one-file upload to the live release after the stage: refused too (the file would be lost).
    const third = await store.stage('HDS/');
    write(path.join(dir, 'HDS'), { 'c.html': 'by hand' });
    await store.noteOneFileChange('HDS/', 'HDS/c.html', 'Created');
    await expect(store.commit('HDS/', third.id)).rejects.toMatchObject({ code: 'release.live_moved' });
    // A rollback after the stage: refused too.
    const fourth = await store.stage('HDS/');
    await store.rollback('HDS/');
    await expect(store.commit('HDS/', fourth.id)).rejects.toMatchObject({ code: 'release.live_moved' });
    // The stage's own files are no base change: a stage staged and committed alone still commits.
    const fifth = await store.stage('HDS/');
    write(fifth.dir, { 'd.html': 'd' });
    await expect(store.commit('HDS/', fifth.id)).resolves.toMatchObject({ id: fifth.id });
    expect(read('HDS/d.html')).toBe('d');
  });
});

describe('abandoned stages', () => {
  it("are removed by the prefix's next stage once nothing was written into them for an hour; younger ones stay", async () => {
    let now = Date.now();
    const store = new ReleaseStore({ contractDir: dir, now: () => now });
    await push(store, 'HDS/', { 'a.html': 'one' });
    const old = await store.stage('HDS/', { by: 'gone' });
    const young = await store.stage('HDS/', { by: 'busy' });
    const home = path.join(dir, '.ack-releases', 'HDS');
    // The first was last written into an hour and a second ago, the second a minute short of an hour.
    const at = (ms: number) => new Date(now - ms);
    fs.utimesSync(path.join(home, `.${old.id}.by`), at(3_601_000), at(3_601_000));
    fs.utimesSync(path.join(home, `.${young.id}.by`), at(3_540_000), at(3_540_000));
    now += 1; // the clock the store reads; the files' times above are what counts
    const next = await store.stage('HDS/', { by: 'deploy' });
    expect(fs.existsSync(old.dir)).toBe(false);
    expect(fs.existsSync(path.join(home, `.${old.id}.by`))).toBe(false);
    expect(fs.existsSync(path.join(home, `.${old.id}.base`))).toBe(false);
    expect(fs.existsSync(young.dir)).toBe(true);
    // The young one still commits; the new one is untouched.
    await store.commit('HDS/', young.id);
    expect(fs.existsSync(next.dir)).toBe(true);
    expect(read('HDS/a.html')).toBe('one');
  });
});

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DigestCache } from '../sync/digest-cache.js';
import { ReleaseStore } from './index.js';
import type { SwitchTimings } from './store.js';
import { seedListingDigests } from './listing-seed.js';
import { writeByRename as write } from '../test-support/release-tree.js';

// The listing after a switch (docs/releases.md "The listing after a switch"): the digests a
// release keeps go into the listing's cache under the files' facts as they are after the switch,
// so the next listing reads nothing again; anything that moves a file after that is read again.

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-listing-seed-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

async function push(store: ReleaseStore, files: Record<string, string>) {
  const s = await store.stage('HDS/', { by: 'deploy' });
  write(s.dir, files);
  return store.commit('HDS/', s.id);
}

/** Longer than the kernel's clock tick for file times (at most 10 ms). */
const tick = () => new Promise((resolve) => setTimeout(resolve, 25));
const FILES = ['a.html', 'js/app.js', 'js/lib/util.js'];
const live = (rel: string) => path.join(dir, 'HDS', ...rel.split('/'));
const base = (rel: string) => `HDS/${rel.slice(0, rel.lastIndexOf('/') + 1)}`;
/** What the cache answers for the file as it stands, without reading it (undefined: it would be read). */
const known = (cache: DigestCache, rel: string) =>
  cache.folder(path.dirname(live(rel)), base(rel)).known(path.basename(rel), fs.statSync(live(rel), { bigint: true }))
    ?.line;
/** The line a listing writes after reading the file (a cache that knows nothing). */
const truth = async (rel: string) =>
  (await new DigestCache().digest(live(rel), fs.statSync(live(rel), { bigint: true }), base(rel))).line;

describe('the listing after a switch', () => {
  it('knows every file of the new live release without reading it, line for line as a read gives', async () => {
    const store = new ReleaseStore({ contractDir: dir });
    await push(store, { 'a.html': 'one', 'js/app.js': 'A1', 'js/lib/util.js': 'U' });
    const cache = new DigestCache();
    for (const rel of FILES) await cache.digest(live(rel), fs.statSync(live(rel), { bigint: true }), base(rel));
    // File times move by the kernel's clock tick (a few milliseconds): the links below come later.
    await tick();
    const r2 = await push(store, { 'a.html': 'two' });
    // The stage's hard links moved the ctime of the files it shared: without the seed, read again.
    expect(FILES.map((rel) => known(cache, rel))).toEqual([undefined, undefined, undefined]);
    expect(await seedListingDigests(cache, store, r2)).toBe(3);
    expect(FILES.map((rel) => known(cache, rel))).toEqual(await Promise.all(FILES.map(truth)));
    // A rollback seeds the release it goes back to.
    const back = await store.rollback('HDS/');
    expect(await seedListingDigests(cache, store, back)).toBe(3);
    expect(FILES.map((rel) => known(cache, rel))).toEqual(await Promise.all(FILES.map(truth)));
    expect(known(cache, 'a.html')).toContain('"size":3');
  });

  it('leaves to a read what changed after the switch: an edit in place that puts the mtime back, a file replaced', async () => {
    const store = new ReleaseStore({ contractDir: dir });
    await push(store, { 'a.html': 'one', 'js/app.js': 'A1', 'js/lib/util.js': 'U' });
    const r2 = await push(store, { 'a.html': 'two' });
    // Replaced by hand before the seed: not the file its kept digest was read from, not taken.
    write(path.join(dir, 'HDS'), { 'js/lib/util.js': 'V' });
    expect(await seedListingDigests(new DigestCache(), store, r2)).toBe(2);
    const cache = new DigestCache();
    await seedListingDigests(cache, store, r2);
    expect(known(cache, 'js/lib/util.js')).toBeUndefined();
    // Edited in place after the seed (a clock tick later), same size, mtime put back: its ctime
    // moved, so it is read.
    await tick();
    const target = fs.realpathSync(live('js/app.js'));
    const { atime, mtime } = fs.statSync(target);
    fs.writeFileSync(target, 'A2');
    fs.utimesSync(target, atime, mtime);
    expect(known(cache, 'js/app.js')).toBeUndefined();
    // Its untouched neighbour is still known.
    expect(known(cache, 'a.html')).toBe(await truth('a.html'));
  });

  it('after a rollback that pruned nothing, knows every file from a seed of only the files it switched', async () => {
    const store = new ReleaseStore({ contractDir: dir });
    const r1 = await push(store, { 'a.html': 'one', 'js/app.js': 'A1', 'js/lib/util.js': 'U' });
    const r2 = await push(store, { 'a.html': 'two' });
    const cache = new DigestCache();
    await seedListingDigests(cache, store, r2);
    await tick();
    const timings: SwitchTimings = {};
    const back = await store.rollback('HDS/', r1.id, timings);
    expect(timings.pruned).toBe(0);
    const changed = await store.switchedFiles('HDS/', back.previous, back.id);
    expect(changed).toEqual(['a.html']);
    // Only the switched file is stat'ed and taken; the others' entries still hold (no ctime moved).
    expect(await seedListingDigests(cache, store, back, changed)).toBe(1);
    expect(FILES.map((rel) => known(cache, rel))).toEqual(await Promise.all(FILES.map(truth)));
  });

  it('after a rollback that pruned a release, the files it shared are new to the cache: the whole tree is seeded', async () => {
    await push(new ReleaseStore({ contractDir: dir }), { 'a.html': 'one', 'js/app.js': 'A1', 'js/lib/util.js': 'U' });
    const r2 = await push(new ReleaseStore({ contractDir: dir }), { 'a.html': 'two' });
    const r3 = await push(new ReleaseStore({ contractDir: dir }), { 'a.html': 'three' });
    const cache = new DigestCache();
    await seedListingDigests(cache, new ReleaseStore({ contractDir: dir }), r3);
    await tick();
    // `Releases:Keep` lowered to 1 since: going back to r2 keeps r2 and r3 (within its grace) and removes r1.
    const store = new ReleaseStore({ contractDir: dir, keep: 1 });
    const timings: SwitchTimings = {};
    const back = await store.rollback('HDS/', r2.id, timings);
    expect(timings.pruned).toBe(1);
    const changed = await store.switchedFiles('HDS/', back.previous, back.id);
    await seedListingDigests(cache, store, back, changed);
    // The files r1 shared lost a link: their ctime moved, so a seed of the switched file alone leaves them to a read.
    expect(known(cache, 'js/app.js')).toBeUndefined();
    expect(await seedListingDigests(cache, store, back)).toBe(3);
    expect(FILES.map((rel) => known(cache, rel))).toEqual(await Promise.all(FILES.map(truth)));
  });
});

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fuzzOptions } from '@ack/host/test-support';
import { ReleaseStore } from './index.js';
import { TreeChangedError, formatSums, linkTree, parseSums, treeSummary } from './tree-digest.js';
import { writeByRename as write } from '../test-support/release-tree.js';

// The tree digest at a cost that follows what changed (docs/releases.md "Manifest and history"):
// a hard link no push touched keeps its digest, anything else is read, and the digest is always
// that of the content.

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-tree-digest-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('tree digest', () => {
  it('says the tree changed (not a bare file error) when files it listed go away before they are read', async () => {
    // More files than the walk looks at before the event loop's next turn: the removal below runs
    // in that turn, after some files were listed and before any was read.
    const names = Array.from({ length: 600 }, (_, i) => `f${i}.html`);
    write(dir, Object.fromEntries(names.map((n) => [n, n])));
    const summary = treeSummary(dir);
    setImmediate(() => names.forEach((n) => fs.rmSync(path.join(dir, n))));
    const err = await summary.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TreeChangedError);
    // Its neighbour: files gone before they were listed leave a whole, smaller tree.
    write(dir, { 'a.html': 'a' });
    await expect(treeSummary(dir)).resolves.toMatchObject({ files: 1, bytes: 1 });
  });

  it('reads only the files a stage does not share with the release it came from', async () => {
    const live = path.join(dir, 'live');
    write(live, { 'a.html': 'aaa', 'js/b.js': 'bbb', 'c.css': 'ccc', 'd.txt': 'ddd' });
    const first = await treeSummary(live);
    expect(first.hashed).toBe(4);
    const stage = path.join(dir, 'stage');
    await linkTree(live, stage);
    write(stage, { 'a.html': 'AAA', 'new.js': 'n' }); // replaced and new
    fs.rmSync(path.join(stage, 'd.txt'));
    // An edit in place of a shared file (same size), its mtime moved: read again.
    fs.writeFileSync(path.join(stage, 'c.css'), 'CCC');
    fs.utimesSync(path.join(stage, 'c.css'), new Date('2030-01-01'), new Date('2030-01-01'));

    const known = await treeSummary(stage, first.sums);
    expect(known.hashed).toBe(3);
    const fresh = await treeSummary(stage);
    expect(known.digest).toBe(fresh.digest);
    expect([known.files, known.bytes]).toEqual([fresh.files, fresh.bytes]);
    // The untouched link was taken as known, not read: a digest it was given is the one used.
    const told = new Map(first.sums);
    told.set('js/b.js', { ...told.get('js/b.js')!, sha256: '0'.repeat(64) });
    expect((await treeSummary(stage, told)).digest).not.toBe(fresh.digest);
  });

  it('a hand edit of the live release shows in the next release digest', async () => {
    const store = new ReleaseStore({ contractDir: dir });
    const s1 = await store.stage('HDS/');
    write(s1.dir, { 'a.html': 'one', 'b.html': 'two' });
    await store.commit('HDS/', s1.id);
    fs.writeFileSync(path.join(dir, 'HDS', 'b.html'), 'TWO');
    fs.utimesSync(path.join(dir, 'HDS', 'b.html'), new Date('2030-01-01'), new Date('2030-01-01'));
    const s2 = await store.stage('HDS/');
    write(s2.dir, { 'c.html': 'three' });
    const m2 = await store.commit('HDS/', s2.id);
    expect(m2.digest).toBe((await treeSummary(path.join(dir, 'HDS'))).digest);
    // A release whose digests were lost is read whole, to the same digest.
    fs.rmSync(path.join(dir, '.ack-releases', 'HDS', `${m2.id}.sums`));
    const s3 = await store.stage('HDS/');
    const m3 = await store.commit('HDS/', s3.id);
    expect(m3.digest).toBe(m2.digest);
  });

  it('names the files a switch changed the same from the kept digests as from the disk', async () => {
    const store = new ReleaseStore({ contractDir: dir });
    const s1 = await store.stage('HDS/');
    write(s1.dir, { 'a.html': 'one', 'b.html': 'two', 'c/d.js': 'd' });
    const m1 = await store.commit('HDS/', s1.id);
    const s2 = await store.stage('HDS/');
    write(s2.dir, { 'b.html': 'TWO', 'e.css': 'e' });
    fs.rmSync(path.join(s2.dir, 'c', 'd.js'));
    const m2 = await store.commit('HDS/', s2.id);
    const expected = ['b.html', 'c/d.js', 'e.css'];
    expect(await store.switchedFiles('HDS/', m1.id, m2.id)).toEqual(expected);
    fs.rmSync(path.join(dir, '.ack-releases', 'HDS', `${m1.id}.sums`));
    expect(await store.switchedFiles('HDS/', m1.id, m2.id)).toEqual(expected);
    expect(await new ReleaseStore({ contractDir: dir }).switchedFiles('HDS/', m2.id, m1.id)).toEqual(expected);
  });

  it('takes a staged file digest as written, unless the file changed since', async () => {
    const store = new ReleaseStore({ contractDir: dir });
    const s = await store.stage('HDS/');
    write(s.dir, { 'a.html': 'one', 'b.html': 'two' });
    const told = '0'.repeat(64);
    store.noteStaged('HDS/', s.id, [
      { absolute: path.join(s.dir, 'a.html'), sha256: told, bytes: 3 },
      { absolute: path.join(s.dir, 'b.html'), sha256: told, bytes: 3 },
    ]);
    write(s.dir, { 'b.html': 'TWO!' }); // replaced after it was noted: read
    const m = await store.commit('HDS/', s.id);
    const sums = parseSums(fs.readFileSync(path.join(dir, '.ack-releases', 'HDS', `${m.id}.sums`), 'utf8'))!;
    expect(sums.get('a.html')!.sha256).toBe(told);
    expect(sums.get('b.html')!.sha256).toBe((await treeSummary(path.join(dir, 'HDS'))).sums.get('b.html')!.sha256);
  });

  it('reads its kept digests back, and nothing but a whole document of them', () => {
    const sum = fc.record({
      sha256: fc.stringMatching(/^[0-9a-f]{64}$/),
      ino: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
      size: fc.bigInt({ min: 0n, max: 2n ** 53n }),
      mtimeNs: fc.bigInt({ min: 0n, max: 2n ** 63n - 1n }),
    });
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.string({ minLength: 1 }), sum), { maxLength: 8 }), fc.nat(), (entries, cut) => {
        const sums = new Map(entries);
        const text = formatSums(sums);
        expect(parseSums(text)).toEqual(sums);
        // Cut short (a crash mid-write): never read as digests.
        const short = text.slice(0, cut % (text.length - 1));
        expect(parseSums(short)).toBeUndefined();
      }),
      fuzzOptions(),
    );
    fc.assert(
      fc.property(fc.string(), (text) => {
        const parsed = parseSums(text);
        expect(parsed === undefined || parsed instanceof Map).toBe(true);
      }),
      fuzzOptions(),
    );
  });
});

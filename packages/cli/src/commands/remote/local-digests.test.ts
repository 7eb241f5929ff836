import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { fuzzOptions } from '@ack/host/test-support';
import type { ScannedFile } from './files.js';
import {
  digestCacheFile,
  formatDigestCache,
  loadDigestCache,
  readDigestCache,
  saveDigestCache,
} from './local-digests.js';

// The local digest cache file is read back from disk, where anything may have been left: a reader
// that never throws and takes a digest only for a file whose facts it holds exactly
// (docs/sync.md "The local digest cache").

const SHA = 'b'.repeat(64);
const OLD = Date.now() - 60_000;
const REAL = '/x';
const file = (rel: string, over: Partial<Omit<ScannedFile, 'rel' | 'abs'>> = {}): ScannedFile => ({
  rel,
  abs: `/x/${rel}`,
  size: 3,
  mtimeMs: OLD + 0.123456,
  ctimeMs: OLD + 0.5,
  ino: 42,
  ...over,
});
const byRel = (a: ScannedFile, b: ScannedFile) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0);

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** Runs `fn` with a fresh user cache folder and a fresh synced folder. */
function withCache(fn: (root: string, cacheHome: string) => void) {
  const cacheHome = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-digests-'));
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-digests-root-'));
  dirs.push(cacheHome, root);
  const previous = process.env.XDG_CACHE_HOME;
  process.env.XDG_CACHE_HOME = cacheHome;
  try {
    fn(root, cacheHome);
  } finally {
    if (previous === undefined) delete process.env.XDG_CACHE_HOME;
    else process.env.XDG_CACHE_HOME = previous;
  }
}

describe('the local digest cache', () => {
  it('reads back what it wrote, trusts an entry only while size, times and inode all match, and skips files touched just before the scan', () => {
    withCache((root) => {
      const fresh = file('fresh.html', { mtimeMs: Date.now(), ctimeMs: Date.now() });
      const a = file('a.html');
      saveDigestCache(
        root,
        [
          { scanned: a, sha256: SHA },
          { scanned: fresh, sha256: SHA },
        ],
        Date.now(),
        { digests: [], exact: false },
      );
      const back = (files: ScannedFile[]) => loadDigestCache(root, files);
      // The fresh one is hashed again next time: a coarse clock could hide an edit within the same tick.
      expect(back([a, fresh])).toEqual({ digests: [SHA, undefined], exact: false });
      expect(back([a])).toEqual({ digests: [SHA], exact: true });
      // Each fact alone makes the entry stale; so does another path.
      expect(back([file('a.html', { size: 4 })]).digests).toEqual([undefined]);
      expect(back([file('a.html', { mtimeMs: OLD + 0.124 })]).digests).toEqual([undefined]);
      expect(back([file('a.html', { ctimeMs: OLD + 1 })]).digests).toEqual([undefined]);
      expect(back([file('a.html', { ino: 43 })]).digests).toEqual([undefined]);
      expect(back([file('b.html')]).digests).toEqual([undefined]);
      // An inode past 2^53 is not exact as a number: that file is not kept (its neighbour is).
      const far = file('far.html', { ino: 2 ** 53 + 2 });
      const near = file('near.html', { ino: 2 ** 53 - 1 });
      saveDigestCache(
        root,
        [far, near].map((scanned) => ({ scanned, sha256: SHA })),
        Date.now(),
        {
          digests: [],
          exact: false,
        },
      );
      expect(back([far, near]).digests).toEqual([undefined, SHA]);
    });
  });

  it('writes nothing when it would hold what it holds, and rewrites it when a digest or a file changed', () => {
    withCache((root) => {
      const files = [file('a.html'), file('b.html', { ino: 7 })];
      const entries = files.map((scanned) => ({ scanned, sha256: SHA }));
      saveDigestCache(root, entries, Date.now(), { digests: [], exact: false });
      const cacheFile = digestCacheFile(root);
      const written = fs.statSync(cacheFile).ino;
      const known = loadDigestCache(root, files);
      expect(known.exact).toBe(true);
      saveDigestCache(root, entries, Date.now(), known);
      expect(fs.statSync(cacheFile).ino).toBe(written); // not replaced
      // A digest learnt anew (a file sent) is written back.
      saveDigestCache(root, [entries[0]!, { scanned: files[1]!, sha256: 'c'.repeat(64) }], Date.now(), known);
      expect(fs.statSync(cacheFile).ino).not.toBe(written);
      expect(loadDigestCache(root, files).digests).toEqual([SHA, 'c'.repeat(64)]);
    });
  });

  it('keeps the digests of unchanged files when others were added, changed or removed', () => {
    const before = ['a', 'b', 'c', 'd', 'e/f', 'e/g'].map((r) => file(r));
    const data = formatDigestCache(
      REAL,
      before.map((scanned, i) => ({ scanned, sha256: String(i).repeat(64) })),
    );
    const now = [file('a'), file('aa'), file('c', { size: 9 }), file('d'), file('e/g'), file('z')];
    expect(readDigestCache(data, REAL, now)).toEqual({
      digests: ['0'.repeat(64), undefined, undefined, '3'.repeat(64), '5'.repeat(64), undefined],
      exact: false,
    });
    // The same paths in the same order, one fact changed: only that file loses its digest.
    const changed = before.map((f) => (f.rel === 'd' ? { ...f, ctimeMs: f.ctimeMs + 1 } : f));
    expect(readDigestCache(data, REAL, changed).digests).toEqual(
      ['0', '1', '2', undefined, '4', '5'].map((d) => d?.repeat(64)),
    );
  });

  it('keeps the listing of its files under their base, for exactly those files, and only when all of them are kept', () => {
    const files = [file('a'), file('b')];
    const entries = files.map((scanned) => ({ scanned, sha256: SHA }));
    const listing = { base: 'HDS', text: '{"path":"HDS/a"}\n{"path":"HDS/b"}\n' };
    const data = formatDigestCache(REAL, entries, listing);
    // The listing as the file holds it, bytes (compared whole with a host's, never decoded).
    const kept = { base: listing.base, bytes: Buffer.from(listing.text) };
    expect(readDigestCache(data, REAL, files)).toEqual({ digests: [SHA, SHA], exact: true, listing: kept });
    // Not for other files, nor when a fact moved.
    expect(readDigestCache(data, REAL, [files[0]!]).listing).toBeUndefined();
    expect(readDigestCache(data, REAL, [files[0]!, file('b', { ino: 1 })]).listing).toBeUndefined();
    // A file that cannot be kept (a line break in its path) leaves the listing out.
    const odd = formatDigestCache(REAL, [...entries, { scanned: file('c\nd'), sha256: SHA }], listing);
    expect(readDigestCache(odd, REAL, files)).toEqual({ digests: [SHA, SHA], exact: true });

    withCache((root) => {
      const text = () => listing.text;
      saveDigestCache(root, entries, Date.now(), { digests: [], exact: false }, { base: 'HDS', text });
      const known = loadDigestCache(root, files);
      expect(known.listing).toEqual(kept);
      // Kept as it is under the same base; written again for another one.
      const written = fs.statSync(digestCacheFile(root)).ino;
      saveDigestCache(root, entries, Date.now(), known, { base: 'HDS', text });
      expect(fs.statSync(digestCacheFile(root)).ino).toBe(written);
      saveDigestCache(root, entries, Date.now(), known, { base: 'OTHER', text });
      expect(loadDigestCache(root, files).listing?.base).toBe('OTHER');
      // A file touched just before the scan is not kept, and so neither is the listing.
      const fresh = { scanned: file('c', { mtimeMs: Date.now() }), sha256: SHA };
      saveDigestCache(root, [...entries, fresh], Date.now(), known, { base: 'HDS', text });
      expect(loadDigestCache(root, files)).toEqual({ digests: [SHA, SHA], exact: true });
    });
  });

  it('ignores a cache of another folder, of the old JSON version, or cut short, and removes the old file when writing', () => {
    const files = [file('a.html')];
    const data = formatDigestCache(REAL, [{ scanned: files[0]!, sha256: SHA }]);
    expect(readDigestCache(data, REAL, files).digests).toEqual([SHA]); // the neighbour that is read
    expect(readDigestCache(data, '/y', files).digests).toEqual([undefined]);
    expect(readDigestCache(data.subarray(0, -1), REAL, files).digests).toEqual([undefined]);
    expect(readDigestCache(Buffer.concat([data, Buffer.from('0')]), REAL, files).digests).toEqual([undefined]);
    const v1 = JSON.stringify({ version: 1, root: REAL, files: { 'a.html': [3, OLD + 0.123456, OLD + 0.5, 42, SHA] } });
    expect(readDigestCache(Buffer.from(v1), REAL, files).digests).toEqual([undefined]);

    withCache((root) => {
      const legacy = digestCacheFile(root).replace(/\.digests$/, '.json');
      fs.mkdirSync(path.dirname(legacy), { recursive: true });
      fs.writeFileSync(legacy, v1);
      saveDigestCache(root, [{ scanned: files[0]!, sha256: SHA }], Date.now(), { digests: [], exact: false });
      expect(fs.existsSync(legacy)).toBe(false);
      expect(loadDigestCache(root, files).digests).toEqual([SHA]);
    });
  });

  /** Distinct paths (sorted as a scan sorts them), each with facts and a digest. */
  const scans = fc
    .uniqueArray(
      fc.record({
        rel: fc.oneof(
          fc.string({ minLength: 1, maxLength: 8 }),
          fc.constantFrom('a', 'a/b', 'a b', 'a\0b', 'a\nb', 'ü/€', '\u{1F600}'),
        ),
        size: fc.oneof(fc.nat(), fc.constant(Number.MAX_SAFE_INTEGER)),
        mtimeMs: fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constant(OLD + 0.1)),
        ctimeMs: fc.double({ noNaN: true, noDefaultInfinity: true }),
        ino: fc.nat(),
        sha256: fc.stringMatching(/^[0-9a-f]{64}$/),
      }),
      { selector: (f) => f.rel, maxLength: 8 },
    )
    .map((list) =>
      list
        .map((f) => ({ scanned: { ...f, abs: `/x/${f.rel}` }, sha256: f.sha256 }))
        .sort((a, b) => byRel(a.scanned, b.scanned)),
    );
  const storable = (f: ScannedFile) => !f.rel.includes('\n');

  it('round trip: any set of files reads back whole, and after changes keeps exactly the unchanged files (fuzz)', () => {
    fc.assert(
      fc.property(scans, scans, fc.boolean(), (before, others, shuffle) => {
        const data = formatDigestCache(REAL, before, { base: 'B', text: 'listing\n' });
        const files = before.map((e) => e.scanned);
        const whole = readDigestCache(data, REAL, files);
        expect(whole.digests).toEqual(before.map((e) => (storable(e.scanned) ? e.sha256 : undefined)));
        expect(whole.exact).toBe(files.every(storable));
        expect(whole.listing).toEqual(
          files.every(storable) ? { base: 'B', bytes: Buffer.from('listing\n') } : undefined,
        );
        // Another scan: some files as they were, the others new or changed, in any order.
        const now = [...before.filter((_, i) => i % 2 === 0), ...others].filter(
          (e, i, all) => all.findIndex((o) => o.scanned.rel === e.scanned.rel) === i,
        );
        if (shuffle) now.reverse();
        const read = readDigestCache(
          data,
          REAL,
          now.map((e) => e.scanned),
        );
        now.forEach((e, i) => {
          const was = before.find((b) => b.scanned.rel === e.scanned.rel);
          const same =
            was !== undefined &&
            storable(e.scanned) &&
            (['size', 'mtimeMs', 'ctimeMs', 'ino'] as const).every((k) => was.scanned[k] === e.scanned[k]);
          expect(read.digests[i]).toBe(same ? was.sha256 : undefined);
        });
      }),
      fuzzOptions(),
    );
  });

  it('never throws on a damaged or foreign file, and gives a digest only for facts it holds exactly (fuzz)', () => {
    const damage = fc.oneof(
      fc.record({ kind: fc.constant('cut' as const), at: fc.nat() }),
      fc.record({ kind: fc.constant('set' as const), at: fc.nat(), byte: fc.nat(255) }),
      fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), bytes: fc.uint8Array({ maxLength: 40 }) }),
    );
    // A damaged cache read for the very files it was written for (the case where a digest could
    // wrongly be believed), or any bytes read for any files.
    const damaged = fc.tuple(scans, fc.array(damage, { minLength: 1, maxLength: 3 })).map(([entries, damages]) => {
      let data = formatDigestCache(REAL, entries, { base: 'B', text: 'listing\n' });
      for (const d of damages) {
        const at = d.at % (data.length + 1);
        if (d.kind === 'cut') data = data.subarray(0, at);
        else if (d.kind === 'set')
          data = Buffer.concat([data.subarray(0, at), Buffer.from([d.byte]), data.subarray(at + 1)]);
        else data = Buffer.concat([data.subarray(0, at), d.bytes, data.subarray(at)]);
      }
      return { data, entries };
    });
    const foreign = fc.record({
      data: fc.oneof(
        fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.concat([Buffer.from('ack-sync-digests 2 "/x" '), b])),
        fc.string({ maxLength: 200 }).map((s) => Buffer.from(`ack-sync-digests 2 "/x" ${s}`)),
        fc.json({ maxDepth: 3 }).map((j) => Buffer.from(j)),
      ),
      entries: scans,
    });
    fc.assert(
      fc.property(fc.oneof(damaged, foreign), ({ data, entries }) => {
        const files = entries.map((e) => e.scanned);
        const read = readDigestCache(data, REAL, files);
        expect(read.digests).toHaveLength(files.length);
        const records = referenceRecords(data);
        read.digests.forEach((digest, i) => {
          if (digest === undefined) return;
          expect(digest).toMatch(/^[0-9a-f]{64}$/);
          // The cache holds a record of exactly this path and these facts, with this digest.
          const f = files[i]!;
          expect(records).toContainEqual({ rel: f.rel, facts: [f.size, f.mtimeMs, f.ctimeMs, f.ino], sha256: digest });
        });
        if (read.exact) expect(read.digests).not.toContain(undefined);
      }),
      fuzzOptions(),
    );
  });
});

/** The records of a cache file, read the plain way (a reference for the fuzz test; [] when it is not one). */
function referenceRecords(data: Buffer): Array<{ rel: string; facts: number[]; sha256: string }> {
  const nl = data.indexOf(10);
  const m = /^ack-sync-digests 2 "\/x" (\d+) (\d+) \d+ /.exec(data.toString('utf8', 0, Math.max(nl, 0)));
  if (nl === -1 || !m) return [];
  const count = Number(m[1]);
  const pathsAt = nl + 1 + count * 32;
  const digestsAt = pathsAt + Number(m[2]);
  if (digestsAt + count * 64 > data.length) return [];
  const rels = data.toString('utf8', pathsAt, digestsAt).split('\n');
  return Array.from({ length: count }, (_, j) => ({
    rel: rels[j] ?? '',
    facts: [0, 1, 2, 3].map((k) =>
      os.endianness() === 'LE'
        ? data.readDoubleLE(nl + 1 + j * 32 + k * 8)
        : data.readDoubleBE(nl + 1 + j * 32 + k * 8),
    ),
    sha256: data.toString('latin1', digestsAt + j * 64, digestsAt + (j + 1) * 64),
  }));
}

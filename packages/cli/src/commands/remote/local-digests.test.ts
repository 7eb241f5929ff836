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
    const text = formatDigestCache(
      REAL,
      before.map((scanned, i) => ({ scanned, sha256: String(i).repeat(64) })),
    );
    const now = [file('a'), file('aa'), file('c', { size: 9 }), file('d'), file('e/g'), file('z')];
    expect(readDigestCache(text, REAL, now)).toEqual({
      digests: ['0'.repeat(64), undefined, undefined, '3'.repeat(64), '5'.repeat(64), undefined],
      exact: false,
    });
  });

  it('ignores a cache of another folder, of the old JSON version, or cut short, and removes the old file when writing', () => {
    const files = [file('a.html')];
    const text = formatDigestCache(REAL, [{ scanned: files[0]!, sha256: SHA }]);
    expect(readDigestCache(text, REAL, files).digests).toEqual([SHA]); // the neighbour that is read
    expect(readDigestCache(text, '/y', files).digests).toEqual([undefined]);
    expect(readDigestCache(text.slice(0, -1), REAL, files).digests).toEqual([undefined]);
    expect(readDigestCache(text.replace(' 1\n', ' 2\n'), REAL, files).digests).toEqual([undefined]);
    const v1 = JSON.stringify({ version: 1, root: REAL, files: { 'a.html': [3, OLD + 0.123456, OLD + 0.5, 42, SHA] } });
    expect(readDigestCache(v1, REAL, files).digests).toEqual([undefined]);

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

  it('round trip: any set of files reads back whole, and after changes keeps exactly the unchanged files (fuzz)', () => {
    fc.assert(
      fc.property(scans, scans, (before, others) => {
        const text = formatDigestCache(REAL, before);
        const files = before.map((e) => e.scanned);
        const storable = (f: ScannedFile) => !f.rel.includes('\n');
        const whole = readDigestCache(text, REAL, files);
        expect(whole.digests).toEqual(before.map((e) => (storable(e.scanned) ? e.sha256 : undefined)));
        expect(whole.exact).toBe(files.every(storable));
        // Another scan: some files as they were, the others new or changed.
        const now = [...before.filter((_, i) => i % 2 === 0), ...others]
          .filter((e, i, all) => all.findIndex((o) => o.scanned.rel === e.scanned.rel) === i)
          .sort((a, b) => byRel(a.scanned, b.scanned));
        const read = readDigestCache(
          text,
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
      fc.record({ kind: fc.constant('set' as const), at: fc.nat(), char: fc.string({ minLength: 1, maxLength: 1 }) }),
      fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), text: fc.string({ maxLength: 80 }) }),
    );
    // A damaged cache read for the very files it was written for (the case where a digest could
    // wrongly be believed), or any text read for any files.
    const damaged = fc.tuple(scans, fc.array(damage, { minLength: 1, maxLength: 3 })).map(([entries, damages]) => {
      let text = formatDigestCache(REAL, entries);
      for (const d of damages) {
        const at = d.at % (text.length + 1);
        if (d.kind === 'cut') text = text.slice(0, at);
        else if (d.kind === 'set') text = text.slice(0, at) + d.char + text.slice(at + 1);
        else text = text.slice(0, at) + d.text + text.slice(at);
      }
      return { text, files: entries.map((e) => e.scanned) };
    });
    const foreign = fc.record({
      text: fc.oneof(
        fc.string({ maxLength: 200 }).map((s) => `ack-sync-digests 2 "/x" ${s}`),
        fc.json({ maxDepth: 3 }),
      ),
      files: scans.map((entries) => entries.map((e) => e.scanned)),
    });
    fc.assert(
      fc.property(fc.oneof(damaged, foreign), ({ text, files }) => {
        const read = readDigestCache(text, REAL, files);
        expect(read.digests).toHaveLength(files.length);
        read.digests.forEach((digest, i) => {
          if (digest === undefined) return;
          expect(digest).toMatch(/^[0-9a-f]{64}$/);
          const f = files[i]!;
          expect(text).toContain(`\n${f.rel}\0${f.size} ${f.mtimeMs} ${f.ctimeMs} ${f.ino}\n`);
        });
        if (read.exact) expect(read.digests).not.toContain(undefined);
      }),
      fuzzOptions(),
    );
  });
});

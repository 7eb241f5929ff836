import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { fuzzOptions } from '@ack/host/test-support';
import { cachedDigest, digestCacheFile, parseDigestCache, saveDigestCache } from './local-digests.js';

// The local digest cache file is read back from disk, where anything may have been left: a reader
// that never throws and keeps only well-formed entries (docs/sync.md "The local digest cache").

const SHA = 'b'.repeat(64);
const OLD = Date.now() - 60_000;
const file = (rel: string, over: Partial<{ size: number; mtimeMs: number; ctimeMs: number; ino: number }> = {}) => ({
  rel,
  abs: `/x/${rel}`,
  size: 3,
  mtimeMs: OLD + 0.123456,
  ctimeMs: OLD + 0.5,
  ino: 42,
  ...over,
});

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe('the local digest cache', () => {
  it('reads back what it wrote, trusts an entry only while size, times and inode all match, and skips files touched just before the scan', () => {
    const cacheHome = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-digests-'));
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-digests-root-'));
    dirs.push(cacheHome, root);
    const previous = process.env.XDG_CACHE_HOME;
    process.env.XDG_CACHE_HOME = cacheHome;
    try {
      const fresh = file('fresh.html', { mtimeMs: Date.now(), ctimeMs: Date.now() });
      saveDigestCache(
        root,
        [
          { scanned: file('a.html'), sha256: SHA },
          { scanned: fresh, sha256: SHA },
        ],
        Date.now(),
        new Map(),
      );
      const back = parseDigestCache(fs.readFileSync(digestCacheFile(root), 'utf8'));
      expect([...back.keys()]).toEqual(['a.html']); // the fresh one is hashed again next time
      expect(cachedDigest(back, file('a.html'))).toBe(SHA);
      // Each fact alone makes the entry stale.
      expect(cachedDigest(back, file('a.html', { size: 4 }))).toBeUndefined();
      expect(cachedDigest(back, file('a.html', { mtimeMs: OLD + 0.124 }))).toBeUndefined();
      expect(cachedDigest(back, file('a.html', { ctimeMs: OLD + 1 }))).toBeUndefined();
      expect(cachedDigest(back, file('a.html', { ino: 43 }))).toBeUndefined();
      expect(cachedDigest(back, file('b.html'))).toBeUndefined();
    } finally {
      if (previous === undefined) delete process.env.XDG_CACHE_HOME;
      else process.env.XDG_CACHE_HOME = previous;
    }
  });

  it('never throws on a damaged file, and keeps only well-formed entries (fuzz)', () => {
    const entry = fc.oneof(
      fc.tuple(fc.nat(), fc.double(), fc.double(), fc.nat(), fc.constantFrom(SHA, 'x', 'B'.repeat(64))),
      fc.json({ maxDepth: 2 }).map((j) => JSON.parse(j) as unknown),
    );
    const doc = fc.oneof(
      fc.string({ maxLength: 60 }),
      fc.json({ maxDepth: 3 }),
      fc
        .record({
          version: fc.constantFrom(1, 2, '1'),
          files: fc.dictionary(fc.string({ maxLength: 8 }), entry, { maxKeys: 5 }),
        })
        .map((d) => JSON.stringify(d)),
    );
    fc.assert(
      fc.property(doc, (text) => {
        for (const [rel, e] of parseDigestCache(text)) {
          expect(typeof rel).toBe('string');
          expect(Number.isSafeInteger(e.size) && e.size >= 0).toBe(true);
          expect(Number.isSafeInteger(e.ino)).toBe(true);
          expect(typeof e.mtimeMs).toBe('number');
          expect(e.sha256).toMatch(/^[0-9a-f]{64}$/);
        }
      }),
      fuzzOptions(),
    );
  });
});

import type { HeaderPairs } from '@ack/host';

const LOADER_MARKERS = ['syn.loader.', 'ack.loader.'];

/** True for the original `syn.loader.*` files and the `@ack/loader` bundle (`ack.loader.js`/`.mjs`...). */
export function isLoaderFile(fileName: string): boolean {
  const name = fileName.toLowerCase();
  return LOADER_MARKERS.some((marker) => name.includes(marker));
}

/** A year: what `immutable` promises for a name that changes whenever its content does. */
export const IMMUTABLE = 'public, max-age=31536000, immutable';

/**
 * Cache policy of every file this module serves (docs/static-files.md "Cache policy"): the screen
 * loader must never be cached, because it decides which version of everything else a screen
 * loads; other files get `public, max-age=N` when `StaticFileCacheMaxAge` is above 0, else
 * `no-cache` (a browser may keep the file but revalidates it by ETag on every use, so a changed
 * file shows at once; without any Cache-Control a browser would guess a freshness lifetime from
 * Last-Modified and could show a stale file). Names that carry a content hash
 * (`StaticFileImmutablePattern`) are `immutable` for a year.
 */
export function cacheHeaders(fileName: string, maxAgeSeconds: number, fingerprinted?: RegExp): HeaderPairs {
  if (isLoaderFile(fileName)) {
    return [
      ['Cache-Control', 'no-cache, no-store'],
      ['Expires', '-1'],
    ];
  }
  // A fingerprinted name (`app.3f9a1c2b.js`, `StaticFileImmutablePattern`) never changes content.
  if (fingerprinted?.test(fileName)) return [['Cache-Control', IMMUTABLE]];
  if (maxAgeSeconds > 0) return [['Cache-Control', `public, max-age=${Math.floor(maxAgeSeconds)}`]];
  return [['Cache-Control', 'no-cache']];
}

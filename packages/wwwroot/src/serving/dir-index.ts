import fs from 'node:fs';
import path from 'node:path';
import type { Freshness, Stamp } from './freshness.js';

/**
 * Case-insensitive lookup without a directory listing per request: each directory's listing is
 * read once and kept with the directory's mtime; a later use trusts it while the folder watch
 * (`freshness.ts`) saw no change, else stats the directory (one syscall) and reads it again only
 * when the mtime or the inode moved: every add, remove or rename inside it moves the mtime, and a
 * path switched to another folder (a symlinked release, which `cp -a` or `rsync -t` may have
 * given the same mtime) moves the inode (docs/static-files.md "Symlinked release folders"). So a
 * file added to the static root is found, by any case, on the next request, without a restart.
 *
 * Choice rule (deterministic): in each folder, a name spelled exactly as requested wins; otherwise
 * the names equal to it ignoring case are sorted by UTF-16 code units and the first is taken (so
 * `Logo.PNG` comes before `logo.png`: upper case sorts before lower case).
 */
interface Listing {
  mtimeMs: number;
  /** The folder's inode: a path switched to another folder (a symlinked release) with the same mtime is told apart by it. */
  ino: number;
  /** Read so soon after the folder changed that a later change could carry the same mtime. */
  racy: boolean;
  exact: Set<string>;
  /** Lower-cased name → the first name in code-unit order with that lower-case form. */
  folded: Map<string, string>;
  /** State of the watched folders when the listing was last confirmed (none: validate by stat). */
  stamp: Stamp | undefined;
}

export interface DirectoryIndex {
  /** The on-disk name in `directory` for `segment`, or undefined. Also reports the listing's mtime. */
  pick(directory: string, segment: string): { name: string; mtimeMs: number } | undefined;
  /** True while `directory`'s mtime is still `mtimeMs` (a cached resolution through it holds). */
  unchanged(directory: string, mtimeMs: number): boolean;
  /** Forget a folder's listing (the sync API changed something inside it). */
  invalidate(directory: string): void;
  stats(): { directories: number };
}

export function createDirectoryIndex(maxDirectories = 5_000, freshness?: Freshness): DirectoryIndex {
  const listings = new Map<string, Listing>();

  const listingOf = (directory: string): Listing | undefined => {
    const known = listings.get(directory);
    if (known?.stamp && freshness?.unchanged(known.stamp)) return known;
    const stamp = freshness?.stamp(directory);
    const st = fs.statSync(directory, { throwIfNoEntry: false });
    if (!st || !st.isDirectory()) {
      listings.delete(directory);
      return undefined;
    }
    if (known && known.mtimeMs === st.mtimeMs && known.ino === st.ino && !known.racy) {
      known.stamp = stamp;
      return known;
    }
    let names: string[];
    try {
      names = fs.readdirSync(directory);
    } catch {
      return undefined;
    }
    names.sort();
    const folded = new Map<string, string>();
    for (const name of names) {
      const lower = name.toLowerCase();
      if (!folded.has(lower)) folded.set(lower, name);
    }
    const listing: Listing = {
      mtimeMs: st.mtimeMs,
      ino: st.ino,
      racy: isRacy(st),
      exact: new Set(names),
      folded,
      stamp,
    };
    listings.delete(directory);
    listings.set(directory, listing);
    if (listings.size > maxDirectories) listings.delete(listings.keys().next().value!);
    return listing;
  };

  return {
    pick(directory, segment) {
      const listing = listingOf(directory);
      if (!listing) return undefined;
      const name = listing.exact.has(segment) ? segment : listing.folded.get(segment.toLowerCase());
      return name === undefined ? undefined : { name, mtimeMs: listing.mtimeMs };
    },
    unchanged(directory, mtimeMs) {
      const listing = listings.get(directory);
      if (listing?.stamp && freshness?.unchanged(listing.stamp)) return listing.mtimeMs === mtimeMs;
      if (!listing || listing.racy) return false;
      // The watch saw a change somewhere above (or gave no stamp): one stat decides, and when the
      // listing still holds it is stamped again, so the next request costs no system call (as
      // `listingOf` and the file store do); without that, any write in a folder above made every
      // later case-insensitive hit stat its folders again for as long as the host ran.
      const stamp = freshness?.stamp(directory);
      const st = fs.statSync(directory, { throwIfNoEntry: false });
      if (st === undefined || !st.isDirectory() || st.mtimeMs !== listing.mtimeMs || st.ino !== listing.ino)
        return false;
      listing.stamp = stamp;
      return listing.mtimeMs === mtimeMs;
    },
    invalidate(directory) {
      listings.delete(path.resolve(directory));
    },
    stats: () => ({ directories: listings.size }),
  };
}

/**
 * File systems stamp times with a coarse clock: something read within this window of its last
 * change could change again without its times moving, so it is read again next time (the rule
 * git calls "racy clean").
 */
export const RACY_WINDOW_MS = 100;

export function isRacy(st: fs.Stats): boolean {
  return Date.now() - Math.max(st.mtimeMs, st.ctimeMs) < RACY_WINDOW_MS;
}

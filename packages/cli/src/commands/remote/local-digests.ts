import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ScannedFile } from './files.js';

// The local digest cache (docs/sync.md "The local digest cache"): the SHA-256 of each file of a
// synced folder, kept between runs under the user's cache folder, so that a push does not read
// and hash again the files whose size, modification time, change time and inode are the same as
// when they were hashed. It only ever saves reading local files: what to send is still decided by
// comparing with the digests the host lists.

/**
 * A file touched this recently before the folder was read may still change within the same tick
 * of a coarse file-system clock without its times moving: its digest is not kept (it is hashed
 * again next time), as git does with "racily clean" entries.
 */
const RACY_MS = 2000;
/**
 * The first line names the format, its version and the folder: a file of another version or
 * another folder is not read at all. Version 1 was one JSON document, which cost a no-op push
 * more to read than all its other work on the cache (docs/sync.md "Speed").
 */
const MAGIC = 'ack-sync-digests';
const VERSION = 2;
const SHA_LENGTH = 64;
/**
 * A character that is not a lowercase hex digit. Looking for one is several times faster than
 * matching a whole 320 KB text against `^[0-9a-f]*$` (about 1 ms of a no-op push of 5,000 files).
 */
const NOT_HEX = /[^0-9a-f]/;

/** The cache folder of this user: `XDG_CACHE_HOME`, `%LOCALAPPDATA%`, `~/Library/Caches` or `~/.cache`. */
export function userCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.XDG_CACHE_HOME && path.isAbsolute(env.XDG_CACHE_HOME)) return env.XDG_CACHE_HOME;
  if (process.platform === 'win32' && env.LOCALAPPDATA) return env.LOCALAPPDATA;
  if (process.platform === 'darwin') return path.join(os.homedir(), 'Library', 'Caches');
  return path.join(os.homedir(), '.cache');
}

/** Where one folder's cache lives: named after a hash of the folder's real path. */
interface CacheLocation {
  /** The folder's real path (what the cache's first line names). */
  real: string;
  file: string;
  /** Where version 1 kept it (removed when the cache is written). */
  legacy: string;
}

function locate(root: string, env: NodeJS.ProcessEnv = process.env): CacheLocation {
  const real = fs.realpathSync(root);
  const key = createHash('sha256').update(real).digest('hex').slice(0, 32);
  const dir = path.join(userCacheDir(env), 'ack', 'sync-digests');
  return { real, file: path.join(dir, `${key}.digests`), legacy: path.join(dir, `${key}.json`) };
}

/** The cache file of one folder (by its real path). */
export function digestCacheFile(root: string, env: NodeJS.ProcessEnv = process.env): string {
  return locate(root, env).file;
}

/** A file of the cache: its path and facts (as scanned) and its digest. */
export interface CacheEntry {
  scanned: ScannedFile;
  sha256: string;
}

/** The host's listing of the cached files (docs/wire-formats.md "Sync listing"), under `base`. */
export interface CachedListing {
  /** The remote folder the files were listed under (`joinRemote(prefix, '')`). */
  base: string;
  /** Their lines, in the cache's order, without the closing line. */
  text: string;
}

/** Lines, each followed by a line break. */
const block = (lines: readonly string[]) => (lines.length === 0 ? '' : `${lines.join('\n')}\n`);
/** Bytes of the four facts of one file: size, modification time, change time, inode. */
const FACTS_BYTES = 32;

/**
 * A cache file (docs/sync.md "The local digest cache"):
 *
 * - a first line, `ack-sync-digests 2 <folder> <files> <paths bytes> <listing bytes> <base>`, the
 *   folder's real path and the base as JSON (the base `null` without a listing);
 * - each file's facts, four 64-bit floating-point numbers in the machine's byte order;
 * - each file's path, a line each;
 * - each file's digest, 64 hex digits;
 * - the listing a host would give of these very files under the base, when they are all there.
 *
 * The facts are numbers as they are (no text to write or parse per file), and the paths one block
 * of text: a folder unchanged since its cache was written is compared with it in a few
 * comparisons, whatever its size (docs/sync.md "Speed"). The files are written in the order given
 * (the scan's). A path holding a line break, or an inode past 2^53, is not kept (that file is
 * hashed on each run).
 */
export function formatDigestCache(real: string, entries: readonly CacheEntry[], listing?: CachedListing): Buffer {
  // An inode beyond 2^53 is not exact as a number (some Windows and network file systems): such
  // a file is hashed on each run rather than trusted on a rounded inode.
  const kept = entries.filter(
    (e) =>
      !e.scanned.rel.includes('\n') &&
      Number.isSafeInteger(e.scanned.ino) &&
      e.sha256.length === SHA_LENGTH &&
      !NOT_HEX.test(e.sha256),
  );
  const facts = new Float64Array(kept.length * 4);
  kept.forEach(({ scanned: f }, i) => {
    facts[i * 4] = f.size;
    facts[i * 4 + 1] = f.mtimeMs;
    facts[i * 4 + 2] = f.ctimeMs;
    facts[i * 4 + 3] = f.ino;
  });
  const paths = Buffer.from(block(kept.map((e) => e.scanned.rel)));
  // A listing is kept only for all the files it was made of.
  const listed = listing && kept.length === entries.length ? listing : undefined;
  const listingBytes = Buffer.from(listed?.text ?? '');
  const header = `${MAGIC} ${VERSION} ${JSON.stringify(real)} ${kept.length} ${paths.length} ${listingBytes.length} ${JSON.stringify(listed?.base ?? null)}\n`;
  return Buffer.concat([
    Buffer.from(header),
    new Uint8Array(facts.buffer),
    paths,
    Buffer.from(kept.map((e) => e.sha256).join(''), 'latin1'),
    listingBytes,
  ]);
}

/** What the cache knew of the files of a scan. */
export interface KnownDigests {
  /** The kept SHA-256 of each file of the scan (same order), when its facts are those it was hashed with. */
  digests: Array<string | undefined>;
  /** True when the cache holds exactly these files with these facts (then nothing need be written back). */
  exact: boolean;
  /**
   * When exact, the listing kept with them, if any: its bytes as the file holds them (compared
   * whole with a host's, never decoded on the way: docs/sync.md "Speed").
   */
  listing?: { base: string; bytes: Buffer };
}

/** Nothing known (no cache, another folder's, damaged, or `--rehash`). */
export const knowNothing = (files: readonly ScannedFile[]): KnownDigests => ({
  digests: new Array<string | undefined>(files.length).fill(undefined),
  exact: false,
});

const HEADER_REST = /^(0|[1-9][0-9]*) (0|[1-9][0-9]*) (0|[1-9][0-9]*) (.*)$/;

/**
 * The digests a cache file (`data`, of the folder whose real path is `real`) holds for `files` (a
 * scan). A digest is taken only for a file whose path and four facts are in the cache exactly; a
 * file of another format, version or folder, or whose first line does not account for its length
 * to the byte, is read as empty. So a damaged or foreign cache costs a rehash, never a wrong
 * answer about a file's facts. Never throws.
 *
 * The common case, a folder unchanged since the cache was written, is one comparison of the
 * scan's paths, all together, with the cache's, and one of the facts file by file: no parsing per
 * file (docs/sync.md "Speed"). Otherwise each file is looked up by its path.
 */
export function readDigestCache(data: Buffer, real: string, files: readonly ScannedFile[]): KnownDigests {
  const none = knowNothing(files);
  const headerEnd = data.indexOf(10);
  if (headerEnd === -1) return none;
  const header = data.toString('utf8', 0, headerEnd);
  const start = `${MAGIC} ${VERSION} ${JSON.stringify(real)} `;
  const rest = header.startsWith(start) ? HEADER_REST.exec(header.slice(start.length)) : null;
  if (!rest) return none;
  const [count, pathsBytes, listingBytes] = [rest[1], rest[2], rest[3]].map(Number) as [number, number, number];
  let base: unknown;
  try {
    base = JSON.parse(rest[4]!);
  } catch {
    return none;
  }
  const factsAt = headerEnd + 1;
  const pathsAt = factsAt + count * FACTS_BYTES;
  const digestsAt = pathsAt + pathsBytes;
  const listingAt = digestsAt + count * SHA_LENGTH;
  if (listingAt + listingBytes !== data.length) return none;
  const digests = data.toString('latin1', digestsAt, listingAt);
  if (NOT_HEX.test(digests)) return none;
  // Copied out: a Float64Array needs an offset that is a multiple of 8.
  const facts = new Float64Array(count * 4);
  new Uint8Array(facts.buffer).set(data.subarray(factsAt, pathsAt));
  const digestOf = (j: number) => digests.slice(j * SHA_LENGTH, (j + 1) * SHA_LENGTH);
  const sameFacts = (f: ScannedFile, j: number) =>
    f.size === facts[j * 4] &&
    f.mtimeMs === facts[j * 4 + 1] &&
    f.ctimeMs === facts[j * 4 + 2] &&
    f.ino === facts[j * 4 + 3];

  const paths = data.toString('utf8', pathsAt, digestsAt);
  if (count === files.length && paths === block(files.map((f) => f.rel))) {
    // The same paths in the same order: file i is entry i.
    let exact = true;
    for (let i = 0; i < files.length; i++) {
      if (sameFacts(files[i]!, i)) none.digests[i] = digestOf(i);
      else exact = false;
    }
    // Some files changed: the others' digests still hold.
    if (!exact) return none;
    const listing = typeof base === 'string' ? { base, bytes: data.subarray(listingAt) } : undefined;
    return { digests: none.digests, exact, ...(listing ? { listing } : {}) };
  }
  const cached = paths.split('\n');
  if (cached.pop() !== '' || cached.length !== count) return none;
  const index = new Map(cached.map((rel, j) => [rel, j]));
  files.forEach((f, i) => {
    const j = index.get(f.rel);
    if (j !== undefined && sameFacts(f, j)) none.digests[i] = digestOf(j);
  });
  return none;
}

/** What the folder's cache knows of `files` (nothing when there is none or it cannot be read). */
export function loadDigestCache(root: string, files: readonly ScannedFile[]): KnownDigests {
  try {
    const { real, file } = locate(root);
    return readDigestCache(fs.readFileSync(file), real, files);
  } catch {
    return knowNothing(files);
  }
}

/**
 * Writes the folder's cache: the files of this run with a known digest, except those touched
 * within `RACY_MS` of `scannedAtMs` (when the folder was read), and, when all of them are kept,
 * `listing` (under its base; its text made only when the cache is written). Nothing is written
 * when that is what the cache already holds (`known`, what it held for these same files). Best
 * effort (a cache that cannot be written only costs a rehash next time); written whole and renamed
 * into place, so a concurrent run reads the old cache or the new one.
 */
export function saveDigestCache(
  root: string,
  files: ReadonlyArray<{ scanned: ScannedFile; sha256?: string }>,
  scannedAtMs: number,
  known: KnownDigests,
  listing?: { base: string; text: () => string | undefined },
): void {
  const kept: CacheEntry[] = [];
  let same = known.exact && (listing === undefined || known.listing?.base === listing.base);
  for (let i = 0; i < files.length; i++) {
    const { scanned: f, sha256 } = files[i]!;
    const keep = sha256 !== undefined && f.mtimeMs < scannedAtMs - RACY_MS && f.ctimeMs < scannedAtMs - RACY_MS;
    if (keep) kept.push({ scanned: f, sha256 });
    if (same && (!keep || sha256 !== known.digests[i])) same = false;
  }
  if (same) return;
  try {
    const { real, file, legacy } = locate(root);
    const text = listing && kept.length === files.length ? listing.text() : undefined;
    const data = formatDigestCache(real, kept, text === undefined ? undefined : { base: listing!.base, text });
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const temp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
    fs.writeFileSync(temp, data);
    try {
      fs.renameSync(temp, file);
    } catch (err) {
      fs.rmSync(temp, { force: true });
      throw err;
    }
    fs.rmSync(legacy, { force: true });
  } catch {
    /* best effort */
  }
}

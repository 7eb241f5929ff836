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
 * The first line names the format, its version, the folder and the number of files: a file of
 * another version or another folder is not read at all. Version 1 was one JSON document, which
 * cost a no-op push more to read than all its other work on the cache (docs/sync.md "Speed").
 */
const MAGIC = 'ack-sync-digests';
const VERSION = 2;
const SHA_LENGTH = 64;
const HEX = /^[0-9a-f]*$/;

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

/**
 * The facts line of a file (without its line break): its path, a NUL (which no file name holds),
 * then its size, modification time, change time and inode as JavaScript writes numbers (which
 * read back to the very same numbers). Two files' lines are equal exactly when their paths and
 * facts are. None for a path that holds a line break (such a file is hashed on each run).
 */
const factsLine = (f: ScannedFile): string | undefined =>
  f.rel.includes('\n') ? undefined : `${f.rel}\0${f.size} ${f.mtimeMs} ${f.ctimeMs} ${f.ino}`;

/** Lines, each followed by a line break. */
const block = (lines: readonly (string | undefined)[]) => (lines.length === 0 ? '' : `${lines.join('\n')}\n`);

const headerStart = (real: string) => `${MAGIC} ${VERSION} ${JSON.stringify(real)} `;

/**
 * The text of a cache: the first line (format, version, folder, number of files), the facts line
 * of each file, then the files' digests, 64 hex digits each, in the same order, and a line break.
 * The files are written in the order given (the scan's order, by path), which is what lets the
 * next run compare its whole scan with the cache at once.
 */
export function formatDigestCache(
  real: string,
  files: ReadonlyArray<{ scanned: ScannedFile; sha256: string }>,
): string {
  const facts: string[] = [];
  const digests: string[] = [];
  for (const { scanned, sha256 } of files) {
    const line = factsLine(scanned);
    if (line === undefined || sha256.length !== SHA_LENGTH || !HEX.test(sha256)) continue;
    facts.push(line);
    digests.push(sha256);
  }
  return `${headerStart(real)}${facts.length}\n${block(facts)}${digests.join('')}\n`;
}

/** What the cache knew of the files of a scan. */
export interface KnownDigests {
  /** The kept SHA-256 of each file of the scan (same order), when its facts are those it was hashed with. */
  digests: Array<string | undefined>;
  /** True when the cache holds exactly these files with these facts (then nothing need be written back). */
  exact: boolean;
}

/** Nothing known (no cache, another folder's, damaged, or `--rehash`). */
export const knowNothing = (files: readonly ScannedFile[]): KnownDigests => ({
  digests: new Array<string | undefined>(files.length).fill(undefined),
  exact: false,
});

/**
 * The digests a cache file's `text` (of the folder whose real path is `real`) holds for `files`
 * (a scan, sorted by path). A digest is taken only for a file whose facts line is in the cache
 * exactly; a file of another format, version or folder, or damaged in its first line, its length
 * or its digests, is read as empty; a damaged facts line only loses its own file. So a damaged or
 * foreign cache costs a rehash, never a wrong answer about a file's facts. Never throws.
 *
 * The common case, a folder unchanged since the cache was written, is one comparison of the
 * scan's facts lines, all together, with the cache's: no parsing per file (docs/sync.md "Speed").
 * Otherwise the two lists, both sorted by path, are walked side by side.
 */
export function readDigestCache(text: string, real: string, files: readonly ScannedFile[]): KnownDigests {
  const none = knowNothing(files);
  const start = headerStart(real);
  const headerEnd = text.indexOf('\n');
  if (!text.startsWith(start) || headerEnd === -1) return none;
  const countText = text.slice(start.length, headerEnd);
  const count = Number(countText);
  if (!/^(0|[1-9][0-9]*)$/.test(countText) || !Number.isSafeInteger(count)) return none;
  const digestsAt = text.length - 1 - count * SHA_LENGTH;
  if (digestsAt <= headerEnd || !text.endsWith('\n')) return none;
  const digests = text.slice(digestsAt, text.length - 1);
  if (!HEX.test(digests)) return none;
  const facts = text.slice(headerEnd + 1, digestsAt);
  const digestOf = (i: number) => digests.slice(i * SHA_LENGTH, (i + 1) * SHA_LENGTH);

  const lines = files.map(factsLine);
  if (count === files.length && !lines.includes(undefined) && block(lines) === facts)
    return { digests: files.map((_, i) => digestOf(i)), exact: true };

  const cached = facts.split('\n');
  if (cached.pop() !== '' || cached.length !== count) return none;
  const relOf = (line: string) => line.slice(0, line.lastIndexOf('\0'));
  for (let i = 0, j = 0; i < files.length && j < cached.length; i++) {
    const rel = files[i]!.rel;
    while (j < cached.length && relOf(cached[j]!) < rel) j++;
    if (j < cached.length && cached[j] === lines[i]) none.digests[i] = digestOf(j++);
  }
  return none;
}

/** What the folder's cache knows of `files` (nothing when there is none or it cannot be read). */
export function loadDigestCache(root: string, files: readonly ScannedFile[]): KnownDigests {
  try {
    const { real, file } = locate(root);
    return readDigestCache(fs.readFileSync(file, 'utf8'), real, files);
  } catch {
    return knowNothing(files);
  }
}

/**
 * Writes the folder's cache: the files of this run with a known digest, except those touched
 * within `RACY_MS` of `scannedAtMs` (when the folder was read). Nothing is written when that is
 * what the cache already holds (`known`, what it held for these same files). Best effort (a cache
 * that cannot be written only costs a rehash next time); written whole and renamed into place, so
 * a concurrent run reads the old cache or the new one.
 */
export function saveDigestCache(
  root: string,
  files: ReadonlyArray<{ scanned: ScannedFile; sha256?: string }>,
  scannedAtMs: number,
  known: KnownDigests,
): void {
  const kept: Array<{ scanned: ScannedFile; sha256: string }> = [];
  let same = known.exact;
  for (const [i, { scanned: f, sha256 }] of files.entries()) {
    const keep = sha256 !== undefined && f.mtimeMs < scannedAtMs - RACY_MS && f.ctimeMs < scannedAtMs - RACY_MS;
    if (keep) kept.push({ scanned: f, sha256 });
    if (same && (!keep || sha256 !== known.digests[i])) same = false;
  }
  if (same) return;
  try {
    const { real, file, legacy } = locate(root);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const temp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
    fs.writeFileSync(temp, formatDigestCache(real, kept));
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

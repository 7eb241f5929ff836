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

/** A cached digest and the facts of the file it was computed from. */
export interface CachedDigest {
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
  sha256: string;
}

/**
 * A file touched this recently before the folder was read may still change within the same tick
 * of a coarse file-system clock without its times moving: its digest is not kept (it is hashed
 * again next time), as git does with "racily clean" entries.
 */
const RACY_MS = 2000;
const VERSION = 1;

/** The cache folder of this user: `XDG_CACHE_HOME`, `%LOCALAPPDATA%`, `~/Library/Caches` or `~/.cache`. */
export function userCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.XDG_CACHE_HOME && path.isAbsolute(env.XDG_CACHE_HOME)) return env.XDG_CACHE_HOME;
  if (process.platform === 'win32' && env.LOCALAPPDATA) return env.LOCALAPPDATA;
  if (process.platform === 'darwin') return path.join(os.homedir(), 'Library', 'Caches');
  return path.join(os.homedir(), '.cache');
}

/** The cache file of one folder (by its real path). */
export function digestCacheFile(root: string, env: NodeJS.ProcessEnv = process.env): string {
  const real = fs.realpathSync(root);
  const key = createHash('sha256').update(real).digest('hex').slice(0, 32);
  return path.join(userCacheDir(env), 'ack', 'sync-digests', `${key}.json`);
}

const SHA = /^[0-9a-f]{64}$/;

/**
 * Reads a cache file's text. Whatever is not a well-formed entry is left out (a damaged or foreign
 * file costs a rehash, never a wrong answer about the file's facts); never throws.
 */
export function parseDigestCache(text: string): Map<string, CachedDigest> {
  const out = new Map<string, CachedDigest>();
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return out;
  }
  if (typeof doc !== 'object' || doc === null || (doc as { version?: unknown }).version !== VERSION) return out;
  const files = (doc as { files?: unknown }).files;
  if (typeof files !== 'object' || files === null || Array.isArray(files)) return out;
  for (const [rel, value] of Object.entries(files as Record<string, unknown>)) {
    if (!Array.isArray(value) || value.length !== 5) continue;
    const [size, mtimeMs, ctimeMs, ino, sha256] = value as unknown[];
    if (!Number.isSafeInteger(size) || (size as number) < 0 || !Number.isSafeInteger(ino)) continue;
    if (typeof mtimeMs !== 'number' || typeof ctimeMs !== 'number') continue;
    if (typeof sha256 !== 'string' || !SHA.test(sha256)) continue;
    out.set(rel, { size: size as number, mtimeMs, ctimeMs, ino: ino as number, sha256 });
  }
  return out;
}

/** The cached digest of `file` when its facts are exactly those it was hashed with. */
export function cachedDigest(cache: ReadonlyMap<string, CachedDigest>, file: ScannedFile): string | undefined {
  const known = cache.get(file.rel);
  return known &&
    known.size === file.size &&
    known.mtimeMs === file.mtimeMs &&
    known.ctimeMs === file.ctimeMs &&
    known.ino === file.ino
    ? known.sha256
    : undefined;
}

/** The folder's cache, or an empty one when there is none or it cannot be read. */
export function loadDigestCache(root: string): Map<string, CachedDigest> {
  try {
    return parseDigestCache(fs.readFileSync(digestCacheFile(root), 'utf8'));
  } catch {
    return new Map();
  }
}

/**
 * Writes the folder's cache: the files of this run with a known digest, except those touched
 * within `RACY_MS` of `scannedAtMs` (when the folder was read). Nothing is written when that is
 * what the cache already holds. Best effort (a cache that cannot be written only costs a rehash
 * next time); written whole and renamed into place, so a concurrent run reads the old cache or the
 * new one.
 */
export function saveDigestCache(
  root: string,
  files: ReadonlyArray<{ scanned: ScannedFile; sha256?: string }>,
  scannedAtMs: number,
  loaded: ReadonlyMap<string, CachedDigest>,
): void {
  const entries: Record<string, [number, number, number, number, string]> = {};
  let count = 0;
  let same = true;
  for (const { scanned: f, sha256 } of files) {
    if (!sha256 || f.mtimeMs >= scannedAtMs - RACY_MS || f.ctimeMs >= scannedAtMs - RACY_MS) continue;
    entries[f.rel] = [f.size, f.mtimeMs, f.ctimeMs, f.ino, sha256];
    count++;
    if (same && cachedDigest(loaded, f) !== sha256) same = false;
  }
  if (same && count === loaded.size) return;
  try {
    const file = digestCacheFile(root);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const temp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
    fs.writeFileSync(temp, JSON.stringify({ version: VERSION, root: fs.realpathSync(root), files: entries }));
    try {
      fs.renameSync(temp, file);
    } catch (err) {
      fs.rmSync(temp, { force: true });
      throw err;
    }
  } catch {
    /* best effort */
  }
}

import fs from 'node:fs';
import path from 'node:path';
import mime from 'mime-types';
import { cacheHeaders, type HeaderPairs } from './cache-policy.js';
import { isRacy } from './dir-index.js';
import type { Freshness, Stamp } from './freshness.js';

/**
 * What the serving engine knows about one file: its identity on disk, the response headers worked
 * out once (Content-Type, ETag, Last-Modified, cache policy) and, for small files, the bytes.
 * A use is validated by the folder watch (`freshness.ts`) when its folders are watched, else by one
 * `fs.statSync`: a file whose inode, size, mtime or ctime moved is read again, so a changed file is
 * served new on the next request.
 */
export interface FileFacts {
  readonly absolute: string;
  readonly ino: number;
  readonly size: number;
  readonly mtimeMs: number;
  readonly ctimeMs: number;
  /** Read within the racy window of its last change: read again on next use. */
  readonly racy: boolean;
  readonly etag: string;
  readonly lastModified: string;
  /** Content-Type, ETag, Last-Modified, Accept-Ranges and the cache policy headers. */
  readonly headers: HeaderPairs;
  /** Headers of a 304: ETag, Last-Modified and the cache policy. */
  readonly notModifiedHeaders: HeaderPairs;
  /** The whole file, when small enough to keep in memory. */
  readonly body: Buffer | undefined;
  /** State of the watched folders when the facts were last confirmed (none: validate by stat). */
  stamp: Stamp | undefined;
}

/** What a caller already knows of a file: its stat, made after the stamp of its folder was taken. */
export interface KnownStat {
  stat: fs.Stats | undefined;
  stamp: Stamp | undefined;
}

export interface FileStoreOptions {
  /** `StaticFileCacheMaxAge` of the host, seconds. */
  maxAgeSeconds: number;
  /** Files up to this size are kept in memory (default 64 KiB). */
  maxFileBytes?: number;
  /** Bytes kept in memory over all files (default 32 MiB). */
  maxTotalBytes?: number;
  /** Files whose facts are remembered (default 20,000). */
  maxEntries?: number;
  /** Folder watch that spares the per-request stat; without it every use is validated by stat. */
  freshness?: Freshness;
}

export interface FileStore {
  /**
   * Facts of a regular file, current as of this call; undefined when there is no such file.
   * `known`: the caller's own stat of `absolute` (and the stamp taken before it), so it is not made twice.
   */
  lookup(absolute: string, known?: KnownStat): FileFacts | undefined;
  /** A stamp of `dir` (take it before a stat that is passed to `lookup`). */
  stamp(dir: string): Stamp | undefined;
  /** Forgets a file (the sync API changed it). */
  invalidate(absolute: string): void;
  /** For tests and the benchmark: entries and bytes held. */
  stats(): { entries: number; bytes: number };
}

export function contentTypeOf(fileName: string): string {
  return mime.contentType(path.extname(fileName)) || 'application/octet-stream';
}

export function createFileStore(options: FileStoreOptions): FileStore {
  const maxFileBytes = options.maxFileBytes ?? 64 * 1024;
  const maxTotalBytes = options.maxTotalBytes ?? 32 * 1024 * 1024;
  const maxEntries = options.maxEntries ?? 20_000;
  // Insertion order is eviction order (oldest first): cheap on the hot path, bounded in memory.
  const entries = new Map<string, FileFacts>();
  let totalBytes = 0;

  const forget = (absolute: string) => {
    const old = entries.get(absolute);
    if (!old) return;
    entries.delete(absolute);
    totalBytes -= old.body?.length ?? 0;
  };

  const remember = (facts: FileFacts) => {
    entries.set(facts.absolute, facts);
    totalBytes += facts.body?.length ?? 0;
    for (const [key, old] of entries) {
      if (totalBytes <= maxTotalBytes && entries.size <= maxEntries) break;
      entries.delete(key);
      totalBytes -= old.body?.length ?? 0;
    }
  };

  const freshness = options.freshness;

  const read = (absolute: string, stat: fs.Stats, stamp: Stamp | undefined): FileFacts | undefined => {
    let body: Buffer | undefined;
    let st = stat;
    if (stat.size <= maxFileBytes) {
      // Read through one descriptor so the bytes and the facts describe the same file.
      let fd: number;
      try {
        fd = fs.openSync(absolute, 'r');
      } catch {
        return undefined;
      }
      try {
        st = fs.fstatSync(fd);
        if (!st.isFile()) return undefined;
        body = Buffer.allocUnsafe(st.size);
        let offset = 0;
        while (offset < st.size) {
          const n = fs.readSync(fd, body, offset, st.size - offset, offset);
          if (n === 0) break;
          offset += n;
        }
        if (offset < st.size) body = body.subarray(0, offset);
      } catch {
        return undefined;
      } finally {
        fs.closeSync(fd);
      }
      // The file shrank while being read: keep no bytes, the next request reads it again.
      if (body && body.length !== st.size) body = undefined;
    }
    const name = path.basename(absolute);
    const etag = `"${st.size.toString(16)}-${Math.floor(st.mtimeMs * 1000).toString(16)}"`;
    const lastModified = new Date(Math.floor(st.mtimeMs / 1000) * 1000).toUTCString();
    const policy = cacheHeaders(name, options.maxAgeSeconds);
    return {
      absolute,
      ino: st.ino,
      size: st.size,
      mtimeMs: st.mtimeMs,
      ctimeMs: st.ctimeMs,
      racy: isRacy(st),
      etag,
      lastModified,
      headers: [
        ['Content-Type', contentTypeOf(name)],
        ['ETag', etag],
        ['Last-Modified', lastModified],
        ['Accept-Ranges', 'bytes'],
        ...policy,
      ],
      notModifiedHeaders: [['ETag', etag], ['Last-Modified', lastModified], ...policy],
      body,
      stamp,
    };
  };

  return {
    lookup(absolute, given) {
      const known = entries.get(absolute);
      // Nothing moved in its folders since the facts were confirmed: no system call.
      if (known?.stamp && freshness?.unchanged(known.stamp)) return known;
      const stamp = given ? given.stamp : freshness?.stamp(path.dirname(absolute));
      const stat = given ? given.stat : fs.statSync(absolute, { throwIfNoEntry: false });
      if (!stat || !stat.isFile()) {
        forget(absolute);
        return undefined;
      }
      if (
        known &&
        !known.racy &&
        known.ino === stat.ino &&
        known.size === stat.size &&
        known.mtimeMs === stat.mtimeMs &&
        known.ctimeMs === stat.ctimeMs
      ) {
        known.stamp = stamp;
        return known;
      }
      forget(absolute);
      const facts = read(absolute, stat, stamp);
      if (facts) remember(facts);
      return facts;
    },
    stamp: (dir) => freshness?.stamp(dir),
    invalidate: forget,
    stats: () => ({ entries: entries.size, bytes: totalBytes }),
  };
}

import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import mime from 'mime-types';
import type { HeaderPairs } from '@ack/host';
import { cacheHeaders } from './cache-policy.js';
import { isRacy } from './dir-index.js';
import type { Freshness, Stamp } from './freshness.js';
import { ENCODINGS, chooseEncoding, isCompressible, type Encoding } from './encoding.js';
import { etagFor, makeRepresentation, readWhole, type Representation, type Resource } from './representation.js';
import type { CompressionCache } from './compression-cache.js';
import { isInsideReal, realPathOf } from './containment.js';

/**
 * What the serving engine knows about one file: its identity on disk, its representations (the
 * file, precompressed sidecars) with their header blocks worked out once, and, for small files,
 * the bytes. A use is validated by the folder watch (`freshness.ts`) when its folders are watched,
 * else by `fs.statSync`: a file (or sidecar) whose inode, size, mtime or ctime moved is read again,
 * so a changed file is served new on the next request.
 */
export interface FileFacts extends Resource {
  readonly absolute: string;
  readonly mtimeMs: number;
  readonly ino: number;
  readonly ctimeMs: number;
  /** Read within the racy window of its last change: read again on next use. */
  readonly racy: boolean;
  readonly contentType: string;
  /** Cache-Control (and Expires) of every representation of this file. */
  readonly policy: HeaderPairs;
  /** What was on disk beside it as `<name>.br` / `<name>.gz` when read (for the stat fallback). */
  readonly sidecarIds: string;
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
  /** `StaticFileImmutablePattern` of the host: fingerprinted names, cached for a year. */
  fingerprinted?: RegExp;
  /** Files up to this size are kept in memory (default 64 KiB). */
  maxFileBytes?: number;
  /** Bytes kept in memory over all files (default 32 MiB). */
  maxTotalBytes?: number;
  /** Files whose facts are remembered (default 20,000). */
  maxEntries?: number;
  /** Folder watch that spares the per-request stat; without it every use is validated by stat. */
  freshness?: Freshness;
  /** `UseResponseComression`: text files without a sidecar are compressed once into this cache. */
  compression?: CompressionCache;
}

export interface FileStore {
  /**
   * Facts of a regular file, current as of this call; undefined when there is no such file.
   * `within`: the folder the file is served from (a served folder's root, or a shared file's own
   * folder); a sidecar is offered only when its real path is inside that folder's real path.
   * `linked`: served through a symlinked folder (its ETag carries a tag of its real path).
   * `known`: the caller's own stat of `absolute` (and the stamp taken before it), so it is not made twice.
   */
  lookup(absolute: string, within: string, known?: KnownStat, linked?: boolean): FileFacts | undefined;
  /** A stamp of `dir` (take it before a stat that is passed to `lookup`). */
  stamp(dir: string): Stamp | undefined;
  /** Forgets a file, whatever folder it was served from (the sync API changed it). */
  invalidate(absolute: string): void;
  /** For tests and the benchmark: entries and bytes held. */
  stats(): { entries: number; bytes: number };
}

export function contentTypeOf(fileName: string): string {
  return mime.contentType(path.extname(fileName)) || 'application/octet-stream';
}

const SIDECAR_SUFFIX: Record<Encoding, string> = { br: '.br', gzip: '.gz' };

export function createFileStore(options: FileStoreOptions): FileStore {
  const maxFileBytes = options.maxFileBytes ?? 64 * 1024;
  const maxTotalBytes = options.maxTotalBytes ?? 32 * 1024 * 1024;
  const maxEntries = options.maxEntries ?? 20_000;
  const { freshness, compression } = options;
  // Per folder a file is served from, then per file: which sidecars may be sent depends on that
  // folder, and a file served from two (a shared-file target inside the static root) keeps one
  // entry for each rather than re-reading on every switch. The folders are few (the served folders
  // and those of shared files), so this costs no more per request than one map keyed by file.
  const byFolder = new Map<string, Map<string, FileFacts>>();
  // Every entry with its folder; insertion order is eviction order (oldest first): cheap on the
  // hot path, bounded in memory.
  const order = new Map<FileFacts, string>();
  let totalBytes = 0;

  const held = (facts: FileFacts) => facts.body?.length ?? 0;

  const forget = (within: string, absolute: string) => {
    const files = byFolder.get(within);
    const old = files?.get(absolute);
    if (!old) return;
    files!.delete(absolute);
    order.delete(old);
    totalBytes -= held(old);
  };

  const remember = (within: string, facts: FileFacts) => {
    let files = byFolder.get(within);
    if (!files) byFolder.set(within, (files = new Map()));
    files.set(facts.absolute, facts);
    order.set(facts, within);
    totalBytes += held(facts);
    for (const [old, folder] of order) {
      if (totalBytes <= maxTotalBytes && order.size <= maxEntries) break;
      forget(folder, old.absolute);
    }
  };

  /** Identity of the sidecars beside a file, as the stat fallback compares it. */
  const sidecarIdsOf = (absolute: string, compressible: boolean): string => {
    if (!compressible) return '';
    let ids = '';
    for (const encoding of ENCODINGS) {
      const st = fs.statSync(absolute + SIDECAR_SUFFIX[encoding], { throwIfNoEntry: false });
      ids += st?.isFile() ? `${encoding}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs};` : '-;';
    }
    return ids;
  };

  const read = (
    absolute: string,
    within: string,
    stat: fs.Stats,
    stamp: Stamp | undefined,
    linked: boolean,
  ): FileFacts | undefined => {
    let st = stat;
    let body: Buffer | undefined;
    if (stat.size <= maxFileBytes) {
      const whole = readWhole(absolute);
      if (whole) ({ st, body } = whole);
      else if (!fs.statSync(absolute, { throwIfNoEntry: false })?.isFile()) return undefined;
    }
    const name = path.basename(absolute);
    const contentType = contentTypeOf(name);
    const policy: HeaderPairs = cacheHeaders(name, options.maxAgeSeconds, options.fingerprinted);
    const compressible = isCompressible(contentType);
    const sidecarIds = sidecarIdsOf(absolute, compressible);
    // Reached through a symlink (a symlinked release folder): its validators carry a tag of its real
    // path, so an ETag of one release never matches another's file of the same size and mtime. One
    // realpath per read, none per hit; a plain folder's ETags stay as they were.
    const real = realPathOf(absolute);
    const through = real === undefined || (real === absolute && !linked) ? '' : pathTag(real);
    const sidecars = new Map<Encoding, Representation>();
    let realWithin: string | undefined;
    for (const encoding of compressible ? ENCODINGS : []) {
      const file = absolute + SIDECAR_SUFFIX[encoding];
      const sst = fs.statSync(file, { throwIfNoEntry: false });
      // Only a sidecar at least as new as its original: an older one is stale, never served.
      if (!sst?.isFile() || sst.mtimeMs < st.mtimeMs) continue;
      // A sidecar is sent in place of the file, so it obeys the same containment rule: a symlink
      // out of the served folder is ignored (docs/static-files.md, lookup rule 5).
      realWithin ??= realPathOf(within);
      if (realWithin === undefined || !isInsideReal(file, realWithin)) continue;
      const whole = sst.size <= maxFileBytes ? readWhole(file) : undefined;
      const s = whole?.st ?? sst;
      sidecars.set(
        encoding,
        makeRepresentation({
          absolute: file,
          size: s.size,
          mtimeMs: s.mtimeMs,
          contentType,
          encoding,
          etagOf: through === '' ? undefined : etagFor(s.size, s.mtimeMs, through),
          policy,
          negotiated: true,
          body: whole?.body,
        }),
      );
    }
    const negotiated = sidecars.size > 0 || (compression !== undefined && compressible);
    const identity = makeRepresentation({
      absolute,
      size: st.size,
      mtimeMs: st.mtimeMs,
      contentType,
      encoding: undefined,
      etagOf: through === '' ? undefined : etagFor(st.size, st.mtimeMs, through),
      policy,
      negotiated,
      body,
    });
    const offered = [...new Set([...sidecars.keys(), ...(compression && compressible ? ENCODINGS : [])])];
    const facts: FileFacts = {
      ...identity,
      absolute,
      mtimeMs: st.mtimeMs,
      ino: st.ino,
      ctimeMs: st.ctimeMs,
      racy: isRacy(st),
      contentType,
      policy,
      sidecarIds,
      stamp,
      negotiate: negotiated
        ? (acceptEncoding) => {
            const encoding = chooseEncoding(acceptEncoding, offered);
            if (!encoding) return facts;
            return sidecars.get(encoding) ?? compression?.get(facts, encoding) ?? facts;
          }
        : undefined,
    };
    return facts;
  };

  return {
    lookup(absolute, within, given, linked = false) {
      const known = byFolder.get(within)?.get(absolute);
      // Nothing moved in its folders since the facts were confirmed: no system call.
      if (known?.stamp && freshness?.unchanged(known.stamp)) return known;
      const stamp = given ? given.stamp : freshness?.stamp(path.dirname(absolute));
      const stat = given ? given.stat : fs.statSync(absolute, { throwIfNoEntry: false });
      if (!stat || !stat.isFile()) {
        forget(within, absolute);
        return undefined;
      }
      if (
        known &&
        !known.racy &&
        known.ino === stat.ino &&
        known.size === stat.size &&
        known.mtimeMs === stat.mtimeMs &&
        known.ctimeMs === stat.ctimeMs &&
        known.sidecarIds === sidecarIdsOf(absolute, known.sidecarIds !== '')
      ) {
        known.stamp = stamp;
        return known;
      }
      forget(within, absolute);
      const facts = read(absolute, within, stat, stamp, linked);
      if (facts) remember(within, facts);
      return facts;
    },
    stamp: (dir) => freshness?.stamp(dir),
    invalidate(absolute) {
      for (const within of byFolder.keys()) forget(within, absolute);
    },
    stats: () => ({ entries: order.size, bytes: totalBytes }),
  };
}

/** A short, stable tag of a real path (the same on every worker and every host with that layout). */
function pathTag(real: string): string {
  return crypto.createHash('sha256').update(real).digest('hex').slice(0, 8);
}

import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { WwwrootRuntime } from '../runtime.js';

/** What a listing writes of one file: its NDJSON line and its size (docs/wire-formats.md "Sync listing"). */
export interface ListedFile {
  readonly line: string;
  readonly bytes: number;
}

interface Digest extends ListedFile {
  /** The facts of the file as hashed, to the nanosecond. */
  size: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
  ino: bigint;
  sha256: string;
  /** `line` names the file under this folder path (relative to a listing's root, see `FolderDigests`). */
  base: string;
  line: string;
}

/** Entries kept; past it the oldest go first (a listing recomputes what is missing). */
const MAX_ENTRIES = 200_000;
/** Files up to this size are read in one call; bigger ones are streamed. */
const READ_WHOLE_BYTES = 1024 * 1024;

/** `JSON.stringify` of `{ path, size, sha256 }`, written out (the digest is hex, the size an integer). */
const lineOf = (relative: string, bytes: number, sha256: string) =>
  `{"path":${JSON.stringify(relative)},"size":${bytes},"sha256":"${sha256}"}\n`;

/** True when `stat` is what `digest` was hashed under: size, mtime, ctime (nanoseconds), inode. */
const sameFacts = (digest: Digest, stat: fs.BigIntStats) =>
  digest.mtimeNs === stat.mtimeNs &&
  digest.ctimeNs === stat.ctimeNs &&
  digest.size === stat.size &&
  digest.ino === stat.ino;

/**
 * The cache's digests of one folder's files, by name, as a listing looks them up (one lookup of
 * the folder, then one of each name: a map keyed by whole paths costs a hash of each path;
 * docs/sync.md "Speed").
 */
export class FolderDigests {
  constructor(
    private readonly files: ReadonlyMap<string, Digest> | undefined,
    /** The folder relative to the listing's root, `/` separated and ending in `/` (or `''`). */
    private readonly base: string,
  ) {}

  /** The file's line and size when `stat` matches what was hashed; no I/O. */
  known(name: string, stat: fs.BigIntStats): ListedFile | undefined {
    const digest = this.files?.get(name);
    if (!digest || !sameFacts(digest, stat)) return undefined;
    // The line is kept whole: a known file costs its stat and this comparison.
    if (digest.base !== this.base) {
      digest.line = lineOf(`${this.base}${name}`, digest.bytes, digest.sha256);
      digest.base = this.base;
    }
    return digest;
  }
}

/**
 * SHA-256 of the files sync lists, computed once per file and kept while the file's size, mtime
 * and ctime (nanoseconds) and inode stay the same (docs/sync.md "The listing"). Every write the host
 * makes is a rename, so a new inode; an edit in place changes the mtime, and the ctime moves too
 * when the mtime is put back afterwards (`touch -d`, `utimes`). `forget` drops an entry when a
 * contract change names the file, so a change the host made is recomputed even if the
 * file system's clock did not move.
 */
export class DigestCache {
  /** By absolute path, oldest first. */
  private readonly entries = new Map<string, Digest>();
  /** The same entries by folder, then name (what a listing looks up). */
  private readonly folders = new Map<string, Map<string, Digest>>();

  forget(absolute: string): void {
    if (!this.entries.delete(absolute)) return;
    const dir = path.dirname(absolute);
    const files = this.folders.get(dir);
    files?.delete(path.basename(absolute));
    if (files?.size === 0) this.folders.delete(dir);
  }

  get size(): number {
    return this.entries.size;
  }

  /** The digests of folder `dir` (absolute), whose path relative to the listing's root is `base`. */
  folder(dir: string, base: string): FolderDigests {
    return new FolderDigests(this.folders.get(dir), base);
  }

  /**
   * The file's line and size: from the cache when `stat` matches what was hashed, else read and
   * hashed now (kept under the facts of the file as opened, so a file replaced meanwhile is hashed
   * again next time). `base` is its folder's path in the listing, as for `folder`.
   */
  async digest(absolute: string, stat: fs.BigIntStats, base: string): Promise<ListedFile> {
    const dir = path.dirname(absolute);
    const name = path.basename(absolute);
    const known = this.folder(dir, base).known(name, stat);
    if (known) return { line: known.line, bytes: known.bytes };
    const handle = await fs.promises.open(absolute, 'r');
    let facts: fs.BigIntStats;
    const hash = createHash('sha256');
    let read = 0;
    try {
      facts = await handle.stat({ bigint: true });
      if (facts.size <= READ_WHOLE_BYTES) {
        const data = await handle.readFile();
        read = data.length;
        hash.update(data);
      } else {
        for await (const chunk of handle.createReadStream({ autoClose: false }) as AsyncIterable<Buffer>) {
          read += chunk.length;
          hash.update(chunk);
        }
      }
    } finally {
      await handle.close();
    }
    const sha256 = hash.digest('hex');
    const digest: Digest = {
      size: facts.size,
      mtimeNs: facts.mtimeNs,
      ctimeNs: facts.ctimeNs,
      ino: facts.ino,
      sha256,
      bytes: read,
      base,
      line: lineOf(`${base}${name}`, read, sha256),
    };
    this.forget(absolute);
    if (BigInt(read) === facts.size) this.keep(absolute, dir, name, digest);
    // A copy: the kept entry's line is rewritten when a listing from another root names the file.
    return { line: digest.line, bytes: digest.bytes };
  }

  /**
   * Takes `sha256` as the digest of the file at `absolute` under its facts `stat`, without reading
   * it: for digests the host already holds for certain (a release's, after a switch: see
   * `seedListingDigests`). `base` is its folder's path in a listing from the contract folder.
   */
  seed(absolute: string, stat: fs.BigIntStats, sha256: string, base: string): void {
    const name = path.basename(absolute);
    const bytes = Number(stat.size);
    this.forget(absolute);
    this.keep(absolute, path.dirname(absolute), name, {
      size: stat.size,
      mtimeNs: stat.mtimeNs,
      ctimeNs: stat.ctimeNs,
      ino: stat.ino,
      sha256,
      bytes,
      base,
      line: lineOf(`${base}${name}`, bytes, sha256),
    });
  }

  private keep(absolute: string, dir: string, name: string, digest: Digest): void {
    this.entries.set(absolute, digest);
    let files = this.folders.get(dir);
    if (!files) this.folders.set(dir, (files = new Map()));
    files.set(name, digest);
    if (this.entries.size > MAX_ENTRIES) this.forget(this.entries.keys().next().value!);
  }
}

/**
 * The listing's digest cache, kept fresh by the host's contract changes (a sync upload, batch or
 * refresh, a contract sync, from any worker) on top of its own size + mtime + inode check.
 */
export function createDigestCache(runtime: WwwrootRuntime): DigestCache {
  const cache = new DigestCache();
  runtime.ctx.host.contractChanges.subscribe((event) => event.files.forEach((file) => cache.forget(file)));
  return cache;
}

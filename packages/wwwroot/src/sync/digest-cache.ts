import { createHash } from 'node:crypto';
import fs from 'node:fs';
import type { WwwrootRuntime } from '../runtime.js';

interface Digest {
  size: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
  ino: bigint;
  /** What a listing says of the file (made once: a listing asks for thousands). */
  listed: { size: number; sha256: string };
}

/** Entries kept; past it the oldest go first (a listing recomputes what is missing). */
const MAX_ENTRIES = 200_000;
/** Files up to this size are read in one call; bigger ones are streamed. */
const READ_WHOLE_BYTES = 1024 * 1024;

/**
 * SHA-256 of the files sync lists, computed once per file and kept while the file's size, mtime
 * and ctime (nanoseconds) and inode stay the same (docs/sync.md "The listing"). Every write the host
 * makes is a rename, so a new inode; an edit in place changes the mtime, and the ctime moves too
 * when the mtime is put back afterwards (`touch -d`, `utimes`). `forget` drops an entry when a
 * contract change names the file, so a change the host made is recomputed even if the
 * file system's clock did not move.
 */
export class DigestCache {
  private readonly entries = new Map<string, Digest>();

  forget(absolute: string): void {
    this.entries.delete(absolute);
  }

  get size(): number {
    return this.entries.size;
  }

  /** The file's size and digest when `stat` matches what was hashed; no I/O. */
  known(absolute: string, stat: fs.BigIntStats): Readonly<{ size: number; sha256: string }> | undefined {
    const known = this.entries.get(absolute);
    return known &&
      known.size === stat.size &&
      known.mtimeNs === stat.mtimeNs &&
      known.ctimeNs === stat.ctimeNs &&
      known.ino === stat.ino
      ? known.listed
      : undefined;
  }

  /**
   * The file's size and digest: from the cache when `stat` matches what was hashed, else read and
   * hashed now (kept under the facts of the file as opened, so a file replaced meanwhile is
   * hashed again next time).
   */
  async digest(absolute: string, stat: fs.BigIntStats): Promise<Readonly<{ size: number; sha256: string }>> {
    const known = this.known(absolute, stat);
    if (known) return known;
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
    this.entries.delete(absolute);
    if (BigInt(read) === facts.size)
      this.entries.set(absolute, {
        size: facts.size,
        mtimeNs: facts.mtimeNs,
        ctimeNs: facts.ctimeNs,
        ino: facts.ino,
        listed: { size: read, sha256 },
      });
    if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    return { size: read, sha256 };
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

import crypto from 'node:crypto';
import type fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';

/**
 * The signed-out token ids on disk (docs/dev-sign-in.md "Sign-out holds"), so that a sign-out
 * outlives the process: a restart, `ack reload` or a replaced worker reads them back. Every process
 * on the home shares the file:
 *
 * - A sign-out is one append (`O_APPEND`, one write) of `\n[expiresAtMs,"tokenId"]`. Earlier
 *   records are never rewritten in place; a record torn by a crash is not valid JSON and is skipped,
 *   and the newline in front of each record keeps the next one readable.
 * - Readers keep their place (file identity and offset) and read only what was added since.
 * - Compaction (expired and repeated records dropped) writes a new file and renames it over the
 *   old one, under a lock file so that one process compacts at a time. Records appended to the old
 *   file meanwhile are carried over: the compactor copies the old file's tail after the rename, and
 *   an appender that finds the path no longer names the file it wrote to appends again.
 */
export interface RevocationFile {
  /** Records one sign-out; resolves once it is in the file. */
  append(tokenId: string, expiresAtMs: number): Promise<void>;
  /** Records added since the last call (by any process), unexpired; all of them on the first call. */
  refresh(): Promise<Array<[tokenId: string, expiresAtMs: number]>>;
}

export interface RevocationFileOptions {
  /** Compaction once at least this many records are expired or repeated, and more than are live. */
  compactAfter?: number;
  /** A lock file older than this is left over from a crash and is removed. */
  staleLockMs?: number;
}

const NEWLINE = 0x0a;
const MAX_TOKEN_ID = 256;

function parseRecord(line: Buffer): [string, number] | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line.toString('utf8'));
  } catch {
    return undefined;
  }
  if (!Array.isArray(value) || value.length !== 2) return undefined;
  const [exp, id] = value as [unknown, unknown];
  if (typeof exp !== 'number' || !Number.isFinite(exp) || typeof id !== 'string') return undefined;
  if (id === '' || id.length > MAX_TOKEN_ID) return undefined;
  return [id, exp];
}

const recordOf = (tokenId: string, expiresAtMs: number) => `\n${JSON.stringify([expiresAtMs, tokenId])}`;

/**
 * Splits `chunk` into records. `consumed`: bytes of `chunk` read for good; an unterminated last
 * line that does not parse may be a write still under way, so it is left for the next read.
 */
function parseChunk(chunk: Buffer): { records: Array<[string, number]>; consumed: number; lines: number } {
  const records: Array<[string, number]> = [];
  let lines = 0;
  let start = 0;
  for (;;) {
    const end = chunk.indexOf(NEWLINE, start);
    const line = chunk.subarray(start, end === -1 ? chunk.length : end);
    if (line.length > 0) {
      const record = parseRecord(line);
      if (record) {
        records.push(record);
        lines++;
      } else if (end === -1) {
        return { records, consumed: start, lines };
      } else {
        lines++;
      }
    }
    if (end === -1) return { records, consumed: chunk.length, lines };
    start = end + 1;
  }
}

export function openRevocationFile(file: string, options: RevocationFileOptions = {}): RevocationFile {
  const { compactAfter = 256, staleLockMs = 30_000 } = options;
  const lockFile = `${file}.lock`;
  // The reader's place: which file (a compaction replaces it) and how far it was read.
  let identity: string | undefined;
  let offset = 0;
  // What the file holds, as far as this process has read it, to know when compaction pays.
  const entries = new Map<string, number>();
  let lines = 0;
  let refreshing: Promise<Array<[string, number]>> | undefined;
  let compacting: Promise<void> | undefined;

  const idOf = (s: fs.Stats) => `${s.dev}:${s.ino}`;

  async function appendOnce(record: string): Promise<boolean> {
    await fsp.mkdir(path.dirname(file), { recursive: true });
    const handle = await fsp.open(file, 'a', 0o600);
    try {
      await handle.write(record);
      const [written, named] = await Promise.all([handle.stat(), fsp.stat(file).catch(() => undefined)]);
      // False when a compaction renamed a new file over this one meanwhile: the record must go there too.
      return named !== undefined && idOf(named) === idOf(written);
    } finally {
      await handle.close();
    }
  }

  async function appendRecords(record: string): Promise<void> {
    for (let attempt = 0; attempt < 5; attempt++) if (await appendOnce(record)) return;
    throw new Error('the sign-out file kept being replaced while appending');
  }

  async function readNew(): Promise<Array<[string, number]>> {
    let named: fs.Stats;
    try {
      named = await fsp.stat(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    if (idOf(named) === identity && named.size === offset) return [];
    const handle = await fsp.open(file, 'r');
    try {
      const stat = await handle.stat();
      if (idOf(stat) !== identity || stat.size < offset) {
        // A new file (first read, or a compaction replaced it): read it whole.
        identity = idOf(stat);
        offset = 0;
        entries.clear();
        lines = 0;
      }
      if (stat.size === offset) return [];
      const chunk = Buffer.alloc(stat.size - offset);
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, offset);
      const parsed = parseChunk(chunk.subarray(0, bytesRead));
      offset += parsed.consumed;
      lines += parsed.lines;
      const now = Date.now();
      for (const [id, exp] of parsed.records) entries.set(id, Math.max(exp, entries.get(id) ?? 0));
      return parsed.records.filter(([, exp]) => exp > now);
    } finally {
      await handle.close();
    }
  }

  async function takeLock(): Promise<fsp.FileHandle | undefined> {
    try {
      return await fsp.open(lockFile, 'wx', 0o600);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const held = await fsp.stat(lockFile).catch(() => undefined);
      // Left by a process that died while compacting: removed, and compaction waits for the next turn.
      if (held && Date.now() - held.mtimeMs > staleLockMs) await fsp.rm(lockFile, { force: true });
      return undefined;
    }
  }

  async function compact(): Promise<void> {
    const lock = await takeLock();
    if (!lock) return;
    try {
      const old = await fsp.open(file, 'r');
      try {
        const content = await old.readFile();
        const now = Date.now();
        const live = new Map<string, number>();
        for (const [id, exp] of parseChunk(content).records) {
          if (exp > now) live.set(id, Math.max(exp, live.get(id) ?? 0));
        }
        const temp = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`;
        const out = await fsp.open(temp, 'wx', 0o600);
        try {
          await out.writeFile([...live].map(([id, exp]) => recordOf(id, exp)).join(''));
          // On disk before it replaces the old file: a crash leaves one whole file or the other.
          await out.sync();
        } finally {
          await out.close();
        }
        await fsp.rename(temp, file);
        // Appended to the old file between the read and the rename: carried over.
        const { size } = await old.stat();
        if (size > content.length) {
          const tail = Buffer.alloc(size - content.length);
          const { bytesRead } = await old.read(tail, 0, tail.length, content.length);
          const carried = parseChunk(tail.subarray(0, bytesRead)).records.filter(([, exp]) => exp > now);
          if (carried.length > 0) await appendRecords(carried.map(([id, exp]) => recordOf(id, exp)).join(''));
        }
      } finally {
        await old.close();
      }
    } finally {
      await lock.close();
      await fsp.rm(lockFile, { force: true });
    }
  }

  /** Expired and repeated records outnumber live ones (and are enough to bother): compaction pays. */
  function worthCompacting(): boolean {
    const now = Date.now();
    for (const [id, exp] of entries) if (exp <= now) entries.delete(id);
    const dead = lines - entries.size;
    return dead >= compactAfter && dead > entries.size;
  }

  const refresh = (): Promise<Array<[string, number]>> =>
    (refreshing ??= readNew().finally(() => {
      refreshing = undefined;
    }));

  return {
    async append(tokenId, expiresAtMs) {
      await appendRecords(recordOf(tokenId, expiresAtMs));
      await refresh();
      if (worthCompacting()) {
        await (compacting ??= compact().finally(() => {
          compacting = undefined;
        }));
      }
    },
    refresh,
  };
}

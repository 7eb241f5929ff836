import crypto from 'node:crypto';
import type fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { TokenIdTable } from './token-id-table.js';

/**
 * The signed-out token ids on disk (docs/dev-sign-in.md "Sign-out holds"), so that a sign-out
 * outlives the process: a restart, `ack reload` or a replaced worker reads them back. Every process
 * on the home shares the file:
 *
 * - A sign-out is one append (`O_APPEND`, one write) of `\n[expiresAtMs,"tokenId"]`. Earlier
 *   records are never rewritten in place; a record torn by a crash is not valid JSON and is skipped,
 *   and the newline in front of each record keeps the next one readable.
 * - Readers keep their place (file identity and offset) and read only what was added since, in
 *   chunks with a turn of the event loop between them, so that a file of a million records never
 *   holds the loop for long. Every record read goes to `onRecord`, whoever asked for the read: a
 *   read never moves the place past a record it did not hand over, and a line still being written
 *   is kept until its end arrives.
 * - Compaction (expired and repeated records dropped) writes a new file and renames it over the
 *   old one, under a lock file so that one process compacts at a time. Records appended to the old
 *   file meanwhile are carried over: the compactor copies the old file's tail after the rename, and
 *   an appender that finds the path no longer names the file it wrote to appends again.
 */
export interface RevocationFile {
  /** Records one sign-out; resolves once it is in the file. */
  append(tokenId: string, expiresAtMs: number): Promise<void>;
  /**
   * Reads what any process added since the last read (the whole file on the first, and after a
   * compaction replaced it), giving every unexpired record to `onRecord`. Resolves once every
   * record written before the call is read.
   */
  refresh(): Promise<void>;
}

export interface RevocationFileOptions {
  /** Every unexpired record read, from this process or another. */
  onRecord: (tokenId: string, expiresAtMs: number) => void;
  /** How many unexpired sign-outs this process knows: compaction pays when the file holds far more records. */
  liveCount: () => number;
  /** Compaction once at least this many records are expired or repeated, and more than are live. */
  compactAfter?: number;
  /** A lock file older than this is left over from a crash and is removed. */
  staleLockMs?: number;
  /** Bytes read and parsed between two turns of the event loop. */
  chunkBytes?: number;
}

const NEWLINE = 0x0a;
const MAX_TOKEN_ID = 256;
/** Longer than any record (a token id of 256 characters, escaped, and a number): garbage, skipped. */
const MAX_LINE = 2 * MAX_TOKEN_ID * 6 + 64;

export function parseRecord(line: Buffer): [string, number] | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line.toString('utf8'));
  } catch {
    // Not JSON (a torn record, garbage): `value` stays undefined and is refused below.
  }
  if (!Array.isArray(value) || value.length !== 2) return undefined;
  const [exp, id] = value as [unknown, unknown];
  // `Number.isFinite` is false for anything but a finite number.
  if (!Number.isFinite(exp) || typeof id !== 'string') return undefined;
  if (id === '' || id.length > MAX_TOKEN_ID) return undefined;
  return [id, exp as number];
}

export const recordOf = (tokenId: string, expiresAtMs: number) => `\n${JSON.stringify([expiresAtMs, tokenId])}`;

export interface LineReader {
  /** Gives every whole line of `chunk` (and of what was kept from before) to `emit`; keeps the unfinished last one. */
  feed(chunk: Buffer): void;
  /**
   * The end of what is in the file now: the kept last line is given when it is a whole record
   * (a record cannot be the prefix of another, so one that parses is complete); else kept, as a
   * write may still be under way.
   */
  end(): void;
}

/** Splits a stream of bytes into records, whatever the chunk boundaries. */
export function createLineReader(emit: (tokenId: string, expiresAtMs: number) => void): LineReader {
  let kept: Buffer = Buffer.alloc(0);
  // The kept line outgrew any record: skipped up to its end.
  let skipping = false;
  const line = (bytes: Buffer) => {
    const record = parseRecord(bytes);
    if (record) emit(record[0], record[1]);
  };
  return {
    feed(chunk) {
      let start = 0;
      for (let end = chunk.indexOf(NEWLINE); end !== -1; end = chunk.indexOf(NEWLINE, start)) {
        if (skipping) skipping = false;
        else line(kept.length === 0 ? chunk.subarray(start, end) : Buffer.concat([kept, chunk.subarray(start, end)]));
        kept = Buffer.alloc(0);
        start = end + 1;
      }
      if (skipping) return;
      kept = Buffer.concat([kept, chunk.subarray(start)]);
      if (kept.length > MAX_LINE) {
        kept = Buffer.alloc(0);
        skipping = true;
      }
    },
    end() {
      const record = parseRecord(kept);
      if (!record) return;
      kept = Buffer.alloc(0);
      emit(record[0], record[1]);
    },
  };
}

const idOf = (s: fs.Stats) => `${s.dev}:${s.ino}`;

/**
 * The bytes of a file's start that a reader compares before reading on from its place: a file
 * deleted or replaced may get the inode number of the one it replaced (file systems reuse freed
 * ones), so the identity alone could make a reader skip the first records of a new file. Every
 * compacted file starts with a line of its own (below), which no record parses as.
 */
const HEAD_BYTES = 64;
const headerLine = () => `\n${JSON.stringify({ file: crypto.randomBytes(8).toString('hex') })}`;

async function headOf(handle: fsp.FileHandle): Promise<Buffer> {
  const head = Buffer.alloc(HEAD_BYTES);
  const { bytesRead } = await handle.read(head, 0, HEAD_BYTES, 0);
  return head.subarray(0, bytesRead);
}

/**
 * Reads `handle` from `from` up to `to` through `reader`, a chunk per turn of the event loop: each
 * read waits for the disk, which gives the loop its turn; parsing the chunk is the part that holds it.
 */
async function readRange(
  handle: fsp.FileHandle,
  from: number,
  to: number,
  reader: LineReader,
  chunkBytes: number,
): Promise<number> {
  const buffer = Buffer.allocUnsafe(chunkBytes);
  let at = from;
  while (at < to) {
    const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.length, to - at), at);
    if (bytesRead === 0) break;
    at += bytesRead;
    reader.feed(buffer.subarray(0, bytesRead));
  }
  reader.end();
  return at;
}

export function openRevocationFile(file: string, options: RevocationFileOptions): RevocationFile {
  const { onRecord, liveCount, compactAfter = 256, staleLockMs = 30_000, chunkBytes = 64 * 1024 } = options;
  const lockFile = `${file}.lock`;
  // The reader's place: which file (a compaction replaces it) and how far it was read.
  let identity: string | undefined;
  let offset = 0;
  let head: Buffer = Buffer.alloc(0);
  // Records read from this file (live, expired or repeated), to know when compaction pays.
  let records = 0;
  const emit = (tokenId: string, expiresAtMs: number) => {
    records++;
    if (expiresAtMs > Date.now()) onRecord(tokenId, expiresAtMs);
  };
  let reader = createLineReader(emit);
  let reading: Promise<void> | undefined;
  let queued: Promise<void> | undefined;
  let compacting: Promise<void> | undefined;

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

  async function readNew(): Promise<void> {
    const named = await fsp.stat(file).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return undefined;
      throw err;
    });
    if (!named || (idOf(named) === identity && named.size === offset)) return;
    const handle = await fsp.open(file, 'r');
    try {
      const stat = await handle.stat();
      const start = await headOf(handle);
      if (idOf(stat) !== identity || stat.size < offset || !start.subarray(0, head.length).equals(head)) {
        // A new file (first read, or a compaction replaced it): read whole. What was read of the
        // old one stays known: nothing live is forgotten.
        identity = idOf(stat);
        offset = 0;
        records = 0;
        reader = createLineReader(emit);
      }
      head = start;
      offset = await readRange(handle, offset, stat.size, reader, chunkBytes);
    } finally {
      await handle.close();
    }
  }

  /** One read at a time; a call made during a read waits for the next, which sees what was written before the call. */
  function refresh(): Promise<void> {
    if (!reading) {
      reading = readNew().finally(() => {
        reading = undefined;
      });
      return reading;
    }
    queued ??= reading
      .catch(() => undefined)
      .then(() => {
        queued = undefined;
        return refresh();
      });
    return queued;
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
    const temp = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`;
    try {
      const old = await fsp.open(file, 'r');
      try {
        const oldId = idOf(await old.stat());
        // The live ids in typed-array tables, not a Map: a million strings kept across the read
        // made the collector and the Map's rehash hold the event loop (docs/benchmarks.md).
        const live = new TokenIdTable();
        let sink = (id: string, exp: number) => {
          if (exp > Date.now()) live.set(id, Math.max(exp, live.get(id) ?? 0));
        };
        // One reader for the whole and the tail read after the rename: a record the first read
        // left unfinished is kept in it and completed by the second.
        const reader = createLineReader((id, exp) => sink(id, exp));
        const { size } = await old.stat();
        const read = await readRange(old, 0, size, reader, chunkBytes);
        const out = await fsp.open(temp, 'wx', 0o600);
        try {
          let batch: string[] = [headerLine()];
          for (const [id, exp] of live.entries()) {
            batch.push(recordOf(id, exp));
            if (batch.length < 8192) continue;
            await out.write(batch.join(''));
            batch = [];
            // A compaction of a large file keeps its lock fresh.
            await lock.utimes(new Date(), new Date());
          }
          await out.write(batch.join(''));
          // On disk before it replaces the old file: a crash leaves one whole file or the other.
          await out.sync();
        } finally {
          await out.close();
        }
        const named = await fsp.stat(file).catch(() => undefined);
        // Replaced meanwhile (a lock taken over as stale): that file is not ours to replace.
        if (!named || idOf(named) !== oldId) return;
        await fsp.rename(temp, file);
        // Counted again when the next read finds the new file.
        records = 0;
        // Appended to the old file between the read and the rename: carried over (an empty
        // write when nothing was).
        const carried: string[] = [];
        sink = (id, exp) => carried.push(recordOf(id, exp));
        await readRange(old, read, (await old.stat()).size, reader, chunkBytes);
        await appendRecords(carried.join(''));
      } finally {
        await old.close();
      }
    } finally {
      await fsp.rm(temp, { force: true });
      await lock.close();
      await fsp.rm(lockFile, { force: true });
    }
  }

  /** Expired and repeated records outnumber live ones (and are enough to bother): compaction pays. */
  function worthCompacting(): boolean {
    const live = liveCount();
    const dead = records - live;
    return dead >= compactAfter && dead > live;
  }

  return {
    async append(tokenId, expiresAtMs) {
      await appendRecords(recordOf(tokenId, expiresAtMs));
      if (!worthCompacting()) return;
      await (compacting ??= compact().finally(() => {
        compacting = undefined;
      }));
    },
    refresh,
  };
}

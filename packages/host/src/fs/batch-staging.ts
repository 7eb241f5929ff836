import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import {
  FileTooLargeError,
  discardStaged,
  openTempFd,
  openTempSync,
  stageStream,
  type StageOptions,
  type StagedFile,
  type StagedInternal,
} from './safe-write.js';

// Staging the files of a batch (docs/sync.md "Speed"): a push of thousands of small files is
// bound by the work per file, not by bytes. A small file is gathered in memory, hashed, and
// written with one open, one write and one close, without a flush of its own; before the batch
// commits anything, `flushStaged` makes all of them durable together.

/** A batch file up to this size is staged from memory; a bigger one is streamed as `stageStream` does. */
export const IN_MEMORY_BYTES = 1024 * 1024;
/** From this many unflushed files on, one whole-file-system flush beats a flush per file. */
const FILE_SYSTEM_FLUSH_FROM = 16;
/** Files flushed at once when each is flushed on its own. */
const FLUSH_CONCURRENCY = 4;

const call = <T>(fn: (cb: (err: NodeJS.ErrnoException | null, value: T) => void) => void) =>
  new Promise<T>((resolve, reject) => fn((err, value) => (err ? reject(err) : resolve(value))));

/**
 * At most `limit` files of one request staged at once (gathered in memory or being written): the
 * next file's part is not read until one is done, so the parser, then the socket, wait. However
 * fast a client sends and however slow the disk, a request holds at most `limit` MiB of file
 * bytes in memory.
 */
export class StagingGate {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly limit: number) {}

  /** Takes a place now when one is free. */
  tryEnter(): boolean {
    if (this.active >= this.limit) return false;
    this.active++;
    return true;
  }

  /** Waits for a place (handed over by `leave`, without going through `active`). */
  wait(): Promise<void> {
    return new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  leave(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.active--;
  }
}

/**
 * Stages one file of a batch in `dir`, NOT flushed (`flushStaged` must run before it is
 * committed). Past `IN_MEMORY_BYTES` the file goes on as `stageStream` writes it (flushed). A file
 * over `maxBytes` fails with `FileTooLargeError` and leaves nothing behind; the caller drains the
 * rest of `source`. With a `gate`, waits for a place before reading `source`.
 */
export function stageUnflushed(
  dir: string,
  source: Readable,
  options: StageOptions & { nameHint?: string; gate?: StagingGate } = {},
): Promise<StagedFile> {
  const { gate, ...stageOptions } = options;
  if (!gate) return gathered(dir, source, stageOptions);
  const run = () => gathered(dir, source, stageOptions).finally(() => gate.leave());
  // With a free place the part is listened to at once, before it can end or fail unheard.
  if (gate.tryEnter()) return run();
  // A part whose form failed while it waited is refused by `gathered` (it is destroyed).
  return gate.wait().then(run);
}

const partCut = () => new Error('The file part ended before its end.');

function gathered(dir: string, source: Readable, options: StageOptions & { nameHint?: string }): Promise<StagedFile> {
  const limit = options.maxBytes ?? Infinity;
  // Gone already (the client left while the target was resolved, or the form failed while the file
  // waited for the gate): no 'end', 'error' or 'close' will come.
  if (source.destroyed) return Promise.reject(partCut());
  return new Promise<StagedFile>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    const stop = () => {
      source.off('data', onData);
      source.off('end', onEnd);
      source.off('error', onError);
      source.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > limit) {
        stop();
        return reject(new FileTooLargeError(limit));
      }
      chunks.push(chunk);
      if (bytes <= IN_MEMORY_BYTES) return;
      // Bigger than a batch file usually is: streamed on, what came so far first.
      stop();
      resolve(streamOn(dir, source, chunks, options));
    };
    const onEnd = () => {
      stop();
      resolve(writeWhole(dir, chunks, bytes, options.nameHint ?? 'upload', options.orIn, options.missing));
    };
    const onError = (err: Error) => {
      stop();
      reject(err);
    };
    // Ended without its end and without an error (destroyed): it would otherwise be waited for ever.
    const onClose = () => {
      stop();
      reject(partCut());
    };
    source.on('data', onData).once('end', onEnd).once('error', onError).once('close', onClose);
  });
}

/**
 * Streams the rest of `source` after `head` through `stageStream`, by way of a relay: a failure
 * there (the limit, the disk) ends the relay, never `source`, which belongs to the form's parser
 * (ending it would fail the whole batch, not just this file); the caller drains it.
 */
async function streamOn(
  dir: string,
  source: Readable,
  head: Buffer[],
  options: StageOptions & { nameHint?: string },
): Promise<StagedFile> {
  const relay = new PassThrough();
  for (const chunk of head) relay.write(chunk);
  const cut = (err?: Error) => relay.destroy(err ?? partCut());
  const onClose = () => !source.readableEnded && cut();
  source.once('error', cut).once('close', onClose).pipe(relay);
  try {
    return await stageStream(dir, relay, options);
  } finally {
    source.off('error', cut).off('close', onClose).unpipe(relay);
  }
}

async function writeWhole(
  dir: string,
  chunks: Buffer[],
  bytes: number,
  hint: string,
  orIn: string | undefined,
  missing: Set<string> | undefined,
): Promise<StagedFile> {
  const hash = createHash('sha256');
  for (const chunk of chunks) hash.update(chunk);
  const sha256 = hash.digest('hex');
  if (Date.now() >= threadPoolUntil) {
    const started = performance.now();
    const staged = writeWholeNow(dir, chunks, bytes, sha256, hint, orIn, missing);
    // Only a run of slow writes counts: a disk that is slow is slow for every write, where a write
    // stretched by the scheduler on a busy machine (or by another process's flush) is one of few.
    slowInARow = performance.now() - started > SLOW_WRITE_MS ? slowInARow + 1 : 0;
    if (slowInARow >= SLOW_WRITES_IN_A_ROW) {
      threadPoolUntil = Date.now() + THREAD_POOL_FOR_MS;
      slowInARow = 0;
    }
    if (staged) return staged;
  }
  const { fd, tempPath, createdDir } = await openTempFd(dir, hint, orIn, missing);
  const staged: StagedInternal = { tempPath, bytes, sha256, createdDir, unflushed: true };
  let open = true;
  try {
    // `writeFile` on a descriptor goes on after a short write (a disk filling up mid-write) until
    // the whole file is written or the write fails with the reason.
    await call<void>((cb) => fs.writeFile(fd, Buffer.concat(chunks), (err) => cb(err, undefined)));
    open = false;
    await call<void>((cb) => fs.close(fd, (err) => cb(err, undefined)));
  } catch (err) {
    if (open) await call<void>((cb) => fs.close(fd, () => cb(null, undefined)));
    await discardStaged(staged);
    throw err;
  }
  return staged;
}

/**
 * A small file written with plain calls (open, write, close: tens of microseconds against a disk's
 * page cache) rather than a thread-pool round trip each, whose cost on the event loop was most of
 * a first push's host CPU (docs/sync.md "Speed"). A disk on which SLOW_WRITES_IN_A_ROW such writes
 * in a row each take more than SLOW_WRITE_MS (a network file system) sends this process's small
 * writes through the thread pool again for THREAD_POOL_FOR_MS, so that a slow disk never holds the
 * event loop file after file.
 */
const SLOW_WRITE_MS = 2;
const SLOW_WRITES_IN_A_ROW = 16;
const THREAD_POOL_FOR_MS = 10_000;
let threadPoolUntil = 0;
let slowInARow = 0;

/**
 * `writeWhole`'s plain-call way. Returns `undefined` (nothing left behind) when the file's folder
 * and the staging folder are both missing: the thread-pool way makes the folder.
 */
function writeWholeNow(
  dir: string,
  chunks: Buffer[],
  bytes: number,
  sha256: string,
  hint: string,
  orIn: string | undefined,
  missing: Set<string> | undefined,
): StagedFile | undefined {
  const opened = openTempSync(dir, hint, orIn, missing);
  if (!opened) return undefined;
  const { fd, tempPath } = opened;
  try {
    for (const chunk of chunks) for (let at = 0; at < chunk.length;) at += fs.writeSync(fd, chunk, at);
  } catch (err) {
    fs.closeSync(fd);
    fs.rmSync(tempPath, { force: true });
    throw err;
  }
  fs.closeSync(fd);
  return { tempPath, bytes, sha256, unflushed: true } as StagedInternal;
}

/**
 * Makes every unflushed staged file durable before it is committed. Many files are flushed with
 * one whole-file-system flush of each file system they are on (Linux `syncfs`, through
 * `sync --file-system`): one journal commit rather than one per file. Where that is not
 * available, or it fails, each file is flushed on its own, which also names the file a disk error
 * belongs to. Throws that error.
 */
export async function flushStaged(files: ReadonlyArray<StagedFile | undefined>): Promise<void> {
  const pending = files.filter((f): f is StagedInternal => !!f && (f as StagedInternal).unflushed === true);
  const flushed =
    pending.length >= FILE_SYSTEM_FLUSH_FROM &&
    (await flushFileSystems([...new Set(pending.map((f) => path.dirname(f.tempPath)))]));
  if (!flushed) {
    let next = 0;
    const worker = async () => {
      while (next < pending.length) await flushFile(pending[next++]!.tempPath);
    };
    // A worker with no file left to take ends at once.
    await Promise.all(Array.from({ length: FLUSH_CONCURRENCY }, worker));
  }
  for (const file of pending) file.unflushed = false;
}

async function flushFile(file: string): Promise<void> {
  const fd = await call<number>((cb) => fs.open(file, 'r+', cb));
  try {
    await call<void>((cb) => fs.fdatasync(fd, (err) => cb(err, undefined)));
  } finally {
    await call<void>((cb) => fs.close(fd, () => cb(null, undefined)));
  }
}

/**
 * `sync --file-system -- <folders>` (GNU coreutils; Linux `syncfs` on each folder's file system).
 * True when it ran and reported success; false where there is no such command or it failed (the
 * caller then flushes file by file, so nothing is taken on trust).
 */
export function flushFileSystems(folders: readonly string[]): Promise<boolean> {
  if (process.platform !== 'linux' || folders.length === 0) return Promise.resolve(false);
  return new Promise<boolean>((resolve) => {
    let child;
    try {
      child = spawn('sync', ['--file-system', '--', ...folders], { stdio: 'ignore' });
    } catch {
      return resolve(false);
    }
    child.once('error', () => resolve(false));
    child.once('close', (code) => resolve(code === 0));
  });
}

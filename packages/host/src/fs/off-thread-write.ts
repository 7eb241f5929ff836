import type { Readable } from 'node:stream';
import { Worker } from 'node:worker_threads';
import { hashWriteThreadMain, type FromHashWriteThread, type ToHashWriteThread } from './off-thread-worker.js';

/**
 * Hashing and writing a big upload on a thread of its own (docs/sync.md "One big file").
 *
 * Node's HTTP parser hands over every read from the socket as a new buffer. Kept on the main
 * thread, 200 MiB of such buffers push V8 into full collections of the host's whole heap, several
 * per upload, and the SHA-256 and the writes share the thread with the parser. Each chunk's memory
 * is instead transferred (not copied) to one small thread per process, which hashes and writes it
 * into the descriptor the main thread opened: the main thread only parses, and the garbage is
 * collected in the thread's small heap, where a full collection costs about a millisecond.
 *
 * At most `IN_FLIGHT_BYTES` of a job, and `ALL_IN_FLIGHT_BYTES` of all jobs together, wait on
 * the thread; past either, reading the body waits (the socket's own flow control holds the rest),
 * so that many big uploads at once cannot fill the host's memory.
 */

/** Bytes of one job sent to the thread and not yet written, past which its body is not read on. */
const IN_FLIGHT_BYTES = 8 * 1024 * 1024;
/**
 * The same for all jobs of the thread together (each job may add the one message it sends before
 * it waits: the bound is this plus about 1 MiB per upload).
 */
const ALL_IN_FLIGHT_BYTES = 32 * 1024 * 1024;
/** Bytes of chunks sent to the thread in one message. */
const MESSAGE_BYTES = 1024 * 1024;
/** After this many thread failures in a process, big uploads stay on the main thread. */
const MOST_THREAD_FAILURES = 3;

interface Job {
  readonly id: number;
  /** Chunks not yet sent to the thread, and their bytes. */
  queued: Uint8Array[];
  queuedBytes: number;
  /** Bytes sent to the thread, and those it has written. */
  sent: number;
  written: number;
  sha256?: string;
  failure?: Error;
  dropped: boolean;
  /** The one waiter of this job (for room, the digest, or the drop), woken by any message. */
  wake?: () => void;
  onFailure: (err: Error) => void;
}

class HashWriteThread {
  private readonly worker: Worker;
  private readonly jobs = new Map<number, Job>();
  private nextId = 1;
  dead = false;
  /** Bytes of all jobs sent and not yet written (a job's few queued bytes are its own to bound). */
  inFlight = 0;

  constructor(onDeath: () => void) {
    this.worker = new Worker(`(${String(hashWriteThreadMain)})(require)`, { eval: true });
    // Never what keeps a process alive; a stopping host has no upload left to write.
    this.worker.unref();
    this.worker.on('message', (m: FromHashWriteThread) => this.receive(m));
    const die = (err: Error) => {
      if (this.dead) return;
      this.dead = true;
      onDeath();
      // A thread that is gone touches no descriptor any more.
      for (const job of this.jobs.values()) {
        job.failure ??= err;
        job.dropped = true;
        job.onFailure(err);
        job.wake?.();
      }
      this.jobs.clear();
    };
    this.worker.on('error', die);
    this.worker.on('exit', (code) => die(new Error(`The upload write thread stopped (exit code ${code}).`)));
  }

  open(fd: number, flushEvery: number, onFailure: (err: Error) => void): Job {
    const job: Job = {
      id: this.nextId++,
      queued: [],
      queuedBytes: 0,
      sent: 0,
      written: 0,
      dropped: false,
      onFailure,
    };
    this.jobs.set(job.id, job);
    this.post({ op: 'open', id: job.id, fd, flushEvery });
    return job;
  }

  /**
   * Queues a chunk's memory for the thread: moved when the body's chunks are its own and this one
   * holds its memory whole, else copied. Chunks go in messages of about `MESSAGE_BYTES` (a socket
   * read is tens of KiB; a message each would wake the thread thousands of times per upload).
   */
  write(job: Job, chunk: Buffer, move: boolean): void {
    const whole =
      chunk.byteOffset === 0 && chunk.byteLength === chunk.buffer.byteLength && chunk.buffer instanceof ArrayBuffer;
    job.queued.push(move && whole ? chunk : new Uint8Array(chunk));
    job.queuedBytes += chunk.length;
    if (job.queuedBytes >= MESSAGE_BYTES) this.send(job);
  }

  /** Sends what is queued. */
  send(job: Job): void {
    if (job.queued.length === 0) return;
    const chunks = job.queued;
    job.sent += job.queuedBytes;
    this.inFlight += job.queuedBytes;
    job.queued = [];
    job.queuedBytes = 0;
    this.post(
      { op: 'chunks', id: job.id, chunks },
      chunks.map((c) => c.buffer as ArrayBuffer),
    );
  }

  end(job: Job): void {
    this.send(job);
    this.post({ op: 'end', id: job.id });
  }

  drop(job: Job): void {
    this.post({ op: 'drop', id: job.id });
  }

  forget(job: Job): void {
    if (!this.jobs.delete(job.id)) return;
    this.settle(job, job.sent);
  }

  /** Takes note that `job` has `written` bytes behind it, and wakes every job that may go on. */
  private settle(job: Job, written: number): void {
    this.inFlight -= written - job.written;
    job.written = written;
    for (const other of this.jobs.values()) other.wake?.();
    job.wake?.();
  }

  private post(message: ToHashWriteThread, transfer?: ArrayBuffer[]): void {
    if (!this.dead) this.worker.postMessage(message, transfer);
  }

  private receive(m: FromHashWriteThread): void {
    const job = this.jobs.get(m.id);
    if (!job) return;
    if (m.op === 'progress') return this.settle(job, m.written);
    if (m.op === 'done') job.sha256 = m.sha256;
    else if (m.op === 'dropped') job.dropped = true;
    else {
      const { code, syscall, errno } = m;
      job.failure ??= Object.assign(new Error(m.message), code === undefined ? {} : { code, syscall, errno });
      job.onFailure(job.failure);
    }
    job.wake?.();
  }
}

let shared: HashWriteThread | undefined;
let failures = 0;

/** The process's write thread, started on first use; undefined once threads failed too often. */
function hashWriteThread(): HashWriteThread | undefined {
  if (shared && !shared.dead) return shared;
  if (failures >= MOST_THREAD_FAILURES) return undefined;
  try {
    const thread = new HashWriteThread(() => {
      failures++;
      if (shared === thread) shared = undefined;
    });
    shared = thread;
    return thread;
  } catch {
    failures++;
    return undefined;
  }
}

/** True when big uploads can be written off the main thread in this process. */
export function offThreadWriteAvailable(): boolean {
  return hashWriteThread() !== undefined;
}

async function until(job: Job, ready: () => boolean): Promise<void> {
  while (!ready()) await new Promise<void>((resolve) => (job.wake = resolve));
  job.wake = undefined;
}

export interface OffThreadWriteOptions {
  /** Most bytes accepted; one more ends the write with `tooLarge()`. */
  maxBytes: number;
  tooLarge: () => Error;
  /** A background flush every this many bytes. */
  flushEvery: number;
  /**
   * The body's chunks are its own: nothing else holds their memory (true of the chunks Node's
   * HTTP/1.1 parser hands over, each a fresh copy). Their memory is then moved to the thread, and
   * reads nothing afterwards. Otherwise each chunk is copied.
   */
  chunksOwned: boolean;
}

/**
 * Writes all of `source` into `fd` (opened by the caller, closed by the caller afterwards), hashing
 * it, and flushes it. Throws the source's error, the limit's, or the write's (with its `code`, as
 * `ENOSPC`); by then the thread has stopped touching `fd`. Call only when `offThreadWriteAvailable()`.
 */
export async function writeOffThread(
  fd: number,
  source: Readable,
  options: OffThreadWriteOptions,
): Promise<{ bytes: number; sha256: string }> {
  const thread = hashWriteThread();
  if (!thread) throw new Error('No upload write thread in this process.');
  // A write that fails stops the reading of the body at once.
  const job = thread.open(fd, options.flushEvery, (err) => source.destroy(err));
  let bytes = 0;
  try {
    for await (const chunk of source as AsyncIterable<Buffer>) {
      if (job.failure) throw job.failure;
      bytes += chunk.length;
      if (bytes > options.maxBytes) throw options.tooLarge();
      thread.write(job, chunk, options.chunksOwned);
      if (bytes - job.written > IN_FLIGHT_BYTES || thread.inFlight > ALL_IN_FLIGHT_BYTES) {
        thread.send(job);
        await until(
          job,
          () =>
            job.failure !== undefined ||
            (bytes - job.written <= IN_FLIGHT_BYTES / 2 && thread.inFlight <= ALL_IN_FLIGHT_BYTES),
        );
      }
    }
    if (job.failure) throw job.failure;
    thread.end(job);
    await until(job, () => job.failure !== undefined || job.sha256 !== undefined);
    if (job.failure) throw job.failure;
    return { bytes, sha256: job.sha256! };
  } catch (err) {
    thread.drop(job);
    await until(job, () => job.dropped);
    throw job.failure ?? err;
  } finally {
    thread.forget(job);
  }
}

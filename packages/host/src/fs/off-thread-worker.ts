// Types only: erased from the compiled module, so nothing of them reaches the thread's source.
import type * as nodeCrypto from 'node:crypto';
import type * as nodeFs from 'node:fs';
import type * as nodeWorkerThreads from 'node:worker_threads';

/**
 * The body of the thread that hashes and writes big uploads (`off-thread-write.ts`, docs/sync.md
 * "One big file"). It runs from its own source text (`String(hashWriteThreadMain)`), so it must not
 * use anything from this module's scope: it takes `require` as its argument and loads what it needs.
 * Kept apart from the main side so that nothing else in its file is ever sent to the thread.
 *
 * Messages in, per job `id`: `open` (the descriptor the main thread opened), `chunks` (bytes, in
 * order), `end` (flush and answer the digest), `drop` (stop; answer once nothing touches the
 * descriptor any more). Messages out: `progress` (bytes written so far), `done` (digest),
 * `failed` (the first write or flush error: code and message), `dropped`. `progress` follows every
 * `chunks` message.
 */

/** What the main thread sends. */
export type ToHashWriteThread =
  | { op: 'open'; id: number; fd: number; flushEvery: number }
  | { op: 'chunks'; id: number; chunks: Uint8Array[] }
  | { op: 'end'; id: number }
  | { op: 'drop'; id: number };

/** What the thread answers. */
export type FromHashWriteThread =
  | { op: 'progress'; id: number; written: number }
  | { op: 'done'; id: number; sha256: string }
  | { op: 'failed'; id: number; message: string; code?: string; syscall?: string; errno?: number }
  | { op: 'dropped'; id: number };

export function hashWriteThreadMain(load: (id: string) => unknown): void {
  const { parentPort } = load('node:worker_threads') as typeof nodeWorkerThreads;
  const fs = load('node:fs') as typeof nodeFs;
  const { createHash } = load('node:crypto') as typeof nodeCrypto;
  const port = parentPort!;

  interface Job {
    fd: number;
    hash: nodeCrypto.Hash;
    written: number;
    flushEvery: number;
    flushedUpTo: number;
    /** The background flush in flight, if any. */
    behind?: Promise<void>;
    failed: boolean;
  }
  const jobs = new Map<number, Job>();
  const send = (message: FromHashWriteThread) => port.postMessage(message);
  const fail = (id: number, job: Job, err: unknown) => {
    if (job.failed) return;
    job.failed = true;
    // A system error's code, call and number go along: they say what the client is told (a full disk is 507).
    const e = err as { code?: unknown; syscall?: unknown; errno?: unknown; message?: unknown };
    send({
      op: 'failed',
      id,
      message: String(e?.message ?? err),
      code: typeof e?.code === 'string' ? e.code : undefined,
      syscall: typeof e?.syscall === 'string' ? e.syscall : undefined,
      errno: typeof e?.errno === 'number' ? e.errno : undefined,
    });
  };
  // A flush in the background every `flushEvery` bytes, on the thread pool, so that the disk
  // writes while the rest arrives and the last flush has little left (docs/sync.md "Speed").
  const flushBehind = (id: number, job: Job) => {
    if (job.behind || job.written - job.flushedUpTo < job.flushEvery) return;
    job.flushedUpTo = job.written;
    job.behind = new Promise<void>((resolve) =>
      fs.fdatasync(job.fd, (err) => {
        if (err) fail(id, job, err);
        job.behind = undefined;
        resolve();
      }),
    );
  };

  port.on('message', (m: ToHashWriteThread) => {
    if (m.op === 'open') {
      jobs.set(m.id, {
        fd: m.fd,
        hash: createHash('sha256'),
        written: 0,
        flushEvery: m.flushEvery,
        flushedUpTo: 0,
        failed: false,
      });
      return;
    }
    const job = jobs.get(m.id);
    if (!job) {
      // A job that ended (or never opened) touches nothing any more.
      if (m.op === 'drop') send({ op: 'dropped', id: m.id });
      return;
    }
    if (m.op === 'chunks') {
      if (job.failed) return;
      try {
        for (const chunk of m.chunks) {
          job.hash.update(chunk);
          for (let at = 0; at < chunk.length;) at += fs.writeSync(job.fd, chunk, at, chunk.length - at);
          job.written += chunk.length;
        }
      } catch (err) {
        fail(m.id, job, err);
        return;
      }
      // After every message (about 1 MiB): the main thread bounds what waits on this thread by it.
      send({ op: 'progress', id: m.id, written: job.written });
      flushBehind(m.id, job);
      return;
    }
    if (m.op === 'end') {
      void Promise.resolve(job.behind).then(() => {
        jobs.delete(m.id);
        if (job.failed) return;
        try {
          fs.fsyncSync(job.fd);
        } catch (err) {
          fail(m.id, job, err);
          return;
        }
        send({ op: 'done', id: m.id, sha256: job.hash.digest('hex') });
      });
      return;
    }
    // drop: answered once the background flush, the only call that may still use the descriptor, ended.
    job.failed = true;
    void Promise.resolve(job.behind).then(() => {
      jobs.delete(m.id);
      send({ op: 'dropped', id: m.id });
    });
  });
}

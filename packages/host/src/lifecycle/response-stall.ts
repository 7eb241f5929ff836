import type { Writable } from 'node:stream';

/**
 * Responses the client stopped taking (docs/pipeline.md "Slow and greedy clients"). A writable that
 * has bytes waiting and sees none of them go out for `timeoutMs` is cut: a client that never opens
 * its HTTP/2 window, or an HTTP/1.1 client that stops reading, would otherwise hold an open file and
 * a descriptor for as long as it likes.
 *
 * Progress is what Node can observe: bytes handed to the writable minus the bytes still waiting in
 * it. Node counts a write as gone only once all of it went (a 64 KiB file chunk), so a byte rate
 * finer than one chunk per period cannot be measured; time without progress can
 * (docs/decisions.md, "Stalled responses").
 */
export interface ResponseStallWatch {
  /** Watches `writable` until it closes; `cut` ends it (the socket, or the HTTP/2 stream). */
  watch(writable: Writable, cut: () => void): void;
  /**
   * One look at every watched writable. The connection guard's periodic tick calls it, the same
   * tick that measures request bodies: one timer for both (lifecycle/connection-guard.ts).
   */
  tick(now: number): void;
  /** How many are watched (the guard's timer runs only while something is). */
  readonly size: number;
  /** How many were cut so far. */
  readonly cuts: number;
  close(): void;
}

interface Watched {
  writable: Writable;
  cut: () => void;
  /** Bytes handed to the writable (write and end). */
  handed: number;
  /** Bytes seen gone at the last tick. */
  gone: number;
  lastProgress: number;
}

const byteLength = (chunk: unknown, encoding: unknown): number =>
  typeof chunk === 'string'
    ? Buffer.byteLength(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8')
    : chunk instanceof Uint8Array
      ? chunk.byteLength
      : 0;

/** Pure: whether a watched writable made no progress for `timeoutMs` while bytes were waiting. */
export function stalled(
  waiting: number,
  gone: number,
  before: { gone: number; lastProgress: number },
  now: number,
  timeoutMs: number,
): boolean {
  if (waiting === 0 || gone > before.gone) return false;
  return now - before.lastProgress >= timeoutMs;
}

export function createResponseStallWatch(timeoutMs: number, onCut: (cuts: number) => void): ResponseStallWatch {
  const watched = new Set<Watched>();
  let cuts = 0;

  return {
    tick(now) {
      for (const w of watched) {
        const waiting = w.writable.writableLength;
        const gone = w.handed - waiting;
        if (stalled(waiting, gone, w, now, timeoutMs)) {
          watched.delete(w);
          cuts++;
          onCut(cuts);
          w.cut();
          continue;
        }
        if (waiting === 0 || gone > w.gone) w.lastProgress = now;
        w.gone = gone;
      }
    },
    watch(writable, cut) {
      const w: Watched = { writable, cut, handed: 0, gone: 0, lastProgress: Date.now() };
      const write = writable.write;
      const end = writable.end;
      // `end(chunk)` writes its chunk without going through `write`; counted once either way.
      let ending = false;
      writable.write = function (this: Writable, chunk: unknown, ...rest: unknown[]) {
        if (!ending) w.handed += byteLength(chunk, rest[0]);
        return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
      } as Writable['write'];
      writable.end = function (this: Writable, chunk?: unknown, ...rest: unknown[]) {
        if (typeof chunk !== 'function') w.handed += byteLength(chunk, rest[0]);
        ending = true;
        try {
          return (end as (...a: unknown[]) => Writable).call(this, chunk, ...rest);
        } finally {
          ending = false;
        }
      } as Writable['end'];
      watched.add(w);
      writable.once('close', () => watched.delete(w));
    },
    get size() {
      return watched.size;
    },
    get cuts() {
      return cuts;
    },
    close() {
      watched.clear();
    },
  };
}

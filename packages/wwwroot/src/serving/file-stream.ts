import fs from 'node:fs';
import type { RawResponse } from '@ack/host';

/**
 * Sends bytes `start`..`end` of a file that is not kept in memory, reading into a small pool of
 * reused buffers (docs/static-files.md, "Large files"). A buffer goes back to the pool once the
 * socket has taken its bytes (the write's callback), so the same few buffers stay warm in the CPU's
 * cache instead of a fresh 64 KiB allocation per read, which made the throughput of large files
 * depend on where the allocator happened to place them.
 *
 * Back-pressure: the next read starts only while the response accepts more (`write` returned true)
 * or on its `drain`. A client gone (the response closes) stops the reading; the file is closed once
 * no read is in flight, never under one (its descriptor could be reused by another open meanwhile).
 * The file may shrink between `stat` and read: a response is never ended shorter than its
 * `Content-Length` (the client would wait for bytes that never come); the connection is cut instead.
 */
export function streamFileRange(res: RawResponse, absolute: string, start: number, end: number): void {
  fs.open(absolute, 'r', (openError, fd) => {
    if (openError) return void res.destroy();
    let position = start;
    let left = end - start + 1;
    let reading = false;
    let gone = false;
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      res.off('close', onClose);
      fs.close(fd, () => {});
    };
    const onClose = () => {
      gone = true;
      if (!reading) close();
    };
    res.once('close', onClose);
    const next = () => {
      if (gone || res.destroyed) return close();
      const buffer = takeBuffer();
      reading = true;
      fs.read(fd, buffer, 0, Math.min(CHUNK, left), position, (readError, n) => {
        reading = false;
        if (readError || n === 0 || gone || res.destroyed) {
          giveBuffer(buffer);
          close();
          if (!res.destroyed) res.destroy();
          return;
        }
        position += n;
        left -= n;
        const more = res.write(n === CHUNK ? buffer : buffer.subarray(0, n), (writeError) => {
          // Only a buffer the socket has finished with goes back; after an error it is left to GC.
          if (!writeError) giveBuffer(buffer);
        });
        if (left === 0) {
          close();
          res.end();
        } else if (more) next();
        else res.once('drain', next);
      });
    };
    next();
  });
}

/** 64 KiB per read, Node's default for file streams. */
const CHUNK = 64 * 1024;
/** Free buffers kept: one per connection of a busy moment; more are left to the garbage collector. */
const POOL_MAX = 64;
const pool: Buffer[] = [];

function takeBuffer(): Buffer {
  return pool.pop() ?? Buffer.allocUnsafeSlow(CHUNK);
}

function giveBuffer(buffer: Buffer): void {
  if (pool.length < POOL_MAX) pool.push(buffer);
}

import { createHash } from 'node:crypto';
import fs from 'node:fs';
import type { SentFile } from './multipart-body.js';

// A file sent as the whole body of a request (docs/wire-formats.md "Sync upload of one file"):
// read once, in big chunks, hashed from the very bytes that go out, with its length declared up
// front (no chunked framing; the host refuses a file over its limit before a byte is sent).

/** Bytes read (and handed to the socket) at a time: big reads cost fewer calls per byte. */
const CHUNK_BYTES = 4 * 1024 * 1024;

export interface FileBody {
  /** The length the request declares (the file's size when it was opened). */
  bytes: number;
  body: AsyncIterable<Uint8Array>;
  /** The file's size and digest; set once the body has been read to its end. */
  sent: SentFile[];
}

/** A file that no longer has the size it had when the request declared it. */
function changedWhileSent(file: string, declared: number): Error {
  // Named by its path: the request reports it as a local file that cannot be read.
  return Object.assign(new Error(`${file} changed size while it was sent (${declared} bytes were declared)`), {
    path: file,
  });
}

/**
 * The body of `file` as it is now: its size now is the declared length (a missing file fails before
 * the request starts), and exactly that many bytes are streamed; a file that has another size when
 * it is read fails the request rather than storing a part of it. The answer's digest is checked
 * against what went out.
 */
export async function fileBody(file: string): Promise<FileBody> {
  const size = (await fs.promises.stat(file)).size;
  const sent: SentFile[] = [];
  async function* body(): AsyncGenerator<Uint8Array> {
    // Opened when the request starts sending (a body that is never sent holds no file open).
    const handle = await fs.promises.open(file, 'r');
    try {
      if ((await handle.stat()).size !== size) throw changedWhileSent(file, size);
      const hash = createHash('sha256');
      let position = 0;
      // A fresh buffer per chunk (the one handed on may still be queued for the socket), and the
      // next chunk is read while this one is sent.
      const readChunk = () => {
        const length = Math.min(CHUNK_BYTES, size - position);
        const read = handle.read(Buffer.allocUnsafe(length), 0, length, position);
        position += length;
        // Awaited below, unless the request ends first (the host refused, the socket broke): then
        // its failure must not be an unhandled rejection, which would end the CLI.
        read.catch(() => {});
        return read;
      };
      let next = size > 0 ? readChunk() : undefined;
      let bytes = 0;
      while (next) {
        const { bytesRead, buffer } = await next;
        if (bytesRead < buffer.length) throw changedWhileSent(file, size);
        next = position < size ? readChunk() : undefined;
        hash.update(buffer);
        bytes += bytesRead;
        yield buffer;
      }
      sent.push({ file, bytes, sha256: hash.digest('hex') });
    } finally {
      await handle.close();
    }
  }
  return { bytes: size, body: body(), sent };
}

import { createHash } from 'node:crypto';
import fs from 'node:fs';
import type { BodyWriter } from './http.js';
import type { SentFile } from './multipart-body.js';

// A file sent as the whole body of a request (docs/wire-formats.md "Sync upload of one file"):
// read once, in big chunks, hashed from the very bytes that go out, with its length declared up
// front (no chunked framing; the host refuses a file over its limit before a byte is sent).

/** Bytes read (and handed to the socket) at a time: big reads cost fewer calls per byte. */
const CHUNK_BYTES = 4 * 1024 * 1024;

export interface FileBody {
  /** The length the request declares (the file's size when the body was made). */
  bytes: number;
  write: BodyWriter;
  /** The file's size and digest; set once the body has been written to its end. */
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
 * the request starts), and exactly that many bytes are written; a file that has another size when
 * it is read fails the request rather than storing a part of it. The answer's digest is checked
 * against what went out.
 */
export async function fileBody(file: string): Promise<FileBody> {
  const size = (await fs.promises.stat(file)).size;
  const sent: SentFile[] = [];
  const write: BodyWriter = async (out) => {
    // Opened when the request starts sending (a body that is never sent holds no file open).
    const handle = await fs.promises.open(file, 'r');
    try {
      if ((await handle.stat()).size !== size) throw changedWhileSent(file, size);
      const hash = createHash('sha256');
      // Two buffers, used in turn: one is read (and hashed) while the other is being sent. A
      // buffer is read into again only once its write was taken: no allocation per chunk (which
      // costs page faults and garbage collections over a big file; docs/sync.md "Speed").
      const buffers = [
        Buffer.allocUnsafe(Math.min(CHUNK_BYTES, size)),
        Buffer.allocUnsafe(Math.min(CHUNK_BYTES, size)),
      ];
      let sending: Promise<void> | undefined;
      for (let position = 0, turn = 0; position < size; turn ^= 1) {
        const length = Math.min(CHUNK_BYTES, size - position);
        const { bytesRead } = await handle.read(buffers[turn]!, 0, length, position);
        if (bytesRead < length) throw changedWhileSent(file, size);
        const chunk = buffers[turn]!.subarray(0, length);
        hash.update(chunk);
        position += length;
        await sending;
        sending = new Promise<void>((resolve, reject) => out.write(chunk, (err) => (err ? reject(err) : resolve())));
        // Awaited on the next turn, unless the request ends first (the host refused, the socket
        // broke): then its failure must not be an unhandled rejection, which would end the CLI.
        sending.catch(() => undefined);
      }
      await sending;
      sent.push({ file, bytes: size, sha256: hash.digest('hex') });
    } finally {
      await handle.close();
    }
  };
  return { bytes: size, write, sent };
}

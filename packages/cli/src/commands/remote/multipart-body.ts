import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { RequestInit } from './http.js';

// The `multipart/form-data` bodies the sync client sends (docs/wire-formats.md "Sync batch"),
// written here rather than through `FormData` and file blobs: each file is read once, and its
// SHA-256 is computed from the very bytes that go out (hashed while sending), which is what the
// host's answer is checked against (docs/sync.md "Speed").

/** A text field, or a local file sent as the part `name`. */
export type FormPart = { name: string; value: string } | { name: string; file: string };

/** What was sent of each file part, in the order of the parts: its size and SHA-256. */
export interface SentFile {
  file: string;
  bytes: number;
  sha256: string;
}

export interface MultipartBody {
  contentType: string;
  /** The whole body (small files), or the body as it is read (a big file, streamed). */
  body: Uint8Array | AsyncIterable<Uint8Array>;
  /** Each file part's size and digest; complete once the body has been read to its end. */
  sent: SentFile[];
}

/** Files up to this size are read whole; a bigger one is streamed in chunks of this size. */
const CHUNK_BYTES = 1024 * 1024;

const CRLF = '\r\n';
/**
 * A name or file name as the part's head carries it: quotes and line breaks percent-encoded as
 * browsers do (WHATWG `FormData`), and the other control characters too, which a header may not
 * hold (the host's parser refuses the whole form for one; a local file may be named so).
 */
const quoted = (text: string) =>
  text.replace(/["\u0000-\u001f\u007f]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);

function partHeader(boundary: string, part: FormPart): string {
  const disposition = `Content-Disposition: form-data; name="${quoted(part.name)}"`;
  return 'file' in part
    ? `--${boundary}${CRLF}${disposition}; filename="${quoted(path.basename(part.file))}"${CRLF}Content-Type: application/octet-stream${CRLF}${CRLF}`
    : `--${boundary}${CRLF}${disposition}${CRLF}${CRLF}`;
}

/**
 * A body of small parts, built whole in memory (a batch carries at most a few MiB) in one buffer
 * of its exact size: each file is read straight into its place, never copied again (docs/sync.md
 * "Speed"). A file that changes size while the body is built is read as it is then. Throws (an
 * `ENOENT`, ...) when a file cannot be read, before anything is sent.
 */
export function multipartBuffer(parts: readonly FormPart[], attempts = 3): MultipartBody {
  const boundary = `ack-${randomBytes(12).toString('hex')}`;
  const closing = `--${boundary}--${CRLF}`;
  const fds: number[] = [];
  try {
    const texts: string[] = [];
    const sizes: number[] = [];
    let total = Buffer.byteLength(closing);
    for (const part of parts) {
      const text = partHeader(boundary, part) + ('value' in part ? part.value : '');
      texts.push(text);
      let size = 0;
      if ('file' in part) {
        const fd = fs.openSync(part.file, 'r');
        fds.push(fd);
        size = fs.fstatSync(fd).size;
      }
      sizes.push(size);
      total += Buffer.byteLength(text) + size + CRLF.length;
    }
    // One byte to spare: each file is read one byte past its size, to learn that it grew.
    const body = Buffer.allocUnsafe(total + 1);
    const sent: SentFile[] = [];
    let at = 0;
    let file = 0;
    for (const [i, part] of parts.entries()) {
      at += body.write(texts[i]!, at);
      if ('file' in part) {
        const fd = fds[file++]!;
        const start = at;
        at += named(part.file, () => readInto(fd, body, at, sizes[i]! + 1));
        if (at - start > sizes[i]!) return grown(parts, fds, part.file, attempts - 1);
        const data = body.subarray(start, at);
        sent.push({ file: part.file, bytes: data.length, sha256: createHash('sha256').update(data).digest('hex') });
      }
      at += body.write(CRLF, at);
    }
    at += body.write(closing, at);
    return { contentType: `multipart/form-data; boundary=${boundary}`, body: body.subarray(0, at), sent };
  } finally {
    for (const fd of fds) fs.closeSync(fd);
  }
}

/** Runs a read of `file`, its failure naming the file (a read from a descriptor names none). */
function named<T>(file: string, read: () => T): T {
  try {
    return read();
  } catch (err) {
    if (err instanceof Error && !('path' in err)) Object.assign(err, { path: file });
    throw err;
  }
}

/** Reads up to `length` bytes at `at` (fewer at the file's end); how many were read. */
function readInto(fd: number, into: Buffer, at: number, length: number): number {
  let read = 0;
  for (;;) {
    const n = fs.readSync(fd, into, at + read, length - read, null);
    if (n === 0 || (read += n) === length) return read;
  }
}

/**
 * A file grew while the body was built: the body is built again from the files as they are now,
 * a few times; a file that keeps growing fails the body, naming it.
 */
function grown(parts: readonly FormPart[], fds: number[], file: string, attempts: number): MultipartBody {
  for (const fd of fds.splice(0)) fs.closeSync(fd);
  if (attempts > 0) return multipartBuffer(parts, attempts);
  throw Object.assign(new Error(`${file} kept growing while it was read`), { code: 'EAGAIN', path: file });
}

/**
 * A body streamed as it is read, for a big file: never held in memory, hashed chunk by chunk as
 * it goes out. The files are opened now, so that a missing one fails before the request starts.
 */
export async function multipartStream(parts: readonly FormPart[]): Promise<MultipartBody> {
  const boundary = `ack-${randomBytes(12).toString('hex')}`;
  const sent: SentFile[] = [];
  const handles = new Map<FormPart, fs.promises.FileHandle>();
  try {
    for (const part of parts) if ('file' in part) handles.set(part, await fs.promises.open(part.file, 'r'));
  } catch (err) {
    await Promise.all([...handles.values()].map((h) => h.close()));
    throw err;
  }
  async function* body(): AsyncGenerator<Uint8Array> {
    try {
      for (const part of parts) {
        yield Buffer.from(partHeader(boundary, part));
        const handle = handles.get(part);
        if (handle && 'file' in part) {
          const hash = createHash('sha256');
          let bytes = 0;
          // A fresh buffer per chunk (the one handed on may still be queued for the socket), and
          // the next chunk is read while this one is sent.
          const readChunk = () => {
            const read = handle.read(Buffer.allocUnsafe(CHUNK_BYTES), 0, CHUNK_BYTES, null);
            // Awaited below, unless the request ends first (the host refused, the socket broke):
            // then its failure must not be an unhandled rejection, which would end the CLI.
            read.catch(() => {});
            return read;
          };
          let next = readChunk();
          for (;;) {
            const { bytesRead, buffer } = await next;
            if (bytesRead === 0) break;
            next = readChunk();
            const chunk = buffer.subarray(0, bytesRead);
            hash.update(chunk);
            bytes += bytesRead;
            yield chunk;
          }
          sent.push({ file: part.file, bytes, sha256: hash.digest('hex') });
        } else if ('value' in part) yield Buffer.from(part.value);
        yield Buffer.from(CRLF);
      }
      yield Buffer.from(`--${boundary}--${CRLF}`);
    } finally {
      await Promise.all([...handles.values()].map((h) => h.close()));
    }
  }
  return { contentType: `multipart/form-data; boundary=${boundary}`, body: body(), sent };
}

/** The body for these parts: whole when every file is small, else streamed. */
export async function multipartBody(parts: readonly FormPart[]): Promise<MultipartBody> {
  const big = parts.some(
    (p) => 'file' in p && (fs.statSync(p.file, { throwIfNoEntry: false })?.size ?? 0) > CHUNK_BYTES,
  );
  return big ? multipartStream(parts) : multipartBuffer(parts);
}

/** The request that sends `body` (a streamed body goes out chunked, as it is read). */
export function multipartRequest(body: MultipartBody, headers: Record<string, string>): RequestInit {
  return { method: 'POST', body: body.body, headers: { ...headers, 'Content-Type': body.contentType } };
}

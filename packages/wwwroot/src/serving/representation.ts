import fs from 'node:fs';
import { PreparedHead, type HeaderPairs } from '@ack/host';
import type { Encoding } from './encoding.js';

/**
 * One representation of a file as sent: the file itself, a precompressed sidecar, or a copy
 * compressed once in memory. Its validators and header blocks are worked out once, when it is
 * read, so a request only replays them (see docs/static-files.md).
 */
export interface Representation {
  /** The file streamed when `body` is not held. */
  readonly absolute: string;
  readonly size: number;
  readonly mtimeMs: number;
  readonly etag: string;
  readonly lastModified: string;
  /** Content-Type, Content-Encoding, ETag, Last-Modified, Accept-Ranges, the cache policy and Vary. */
  readonly headers: HeaderPairs;
  /** The head of a 200 with the whole representation: `headers` and its Content-Length. */
  readonly head: PreparedHead;
  /** The head of a 304: ETag, Last-Modified, the cache policy and Vary. */
  readonly notModifiedHead: PreparedHead;
  /** The whole representation, when small enough to keep in memory. */
  readonly body: Buffer | undefined;
}

export interface RepresentationInput {
  absolute: string;
  size: number;
  mtimeMs: number;
  contentType: string;
  encoding: Encoding | undefined;
  /** The validator of the identity file a compressed copy was made from (its own ETag derives from it). */
  etagOf?: string;
  policy: HeaderPairs;
  /** The file has other representations: every answer carries `Vary: Accept-Encoding`. */
  negotiated: boolean;
  body: Buffer | undefined;
}

const VARY_ENCODING = [['Vary', 'Accept-Encoding']] as const;

export function etagFor(size: number, mtimeMs: number): string {
  return `"${size.toString(16)}-${Math.floor(mtimeMs * 1000).toString(16)}"`;
}

export function makeRepresentation(input: RepresentationInput): Representation {
  const base = input.etagOf ?? etagFor(input.size, input.mtimeMs);
  // Each encoding has its own validator: a cache must never answer a gzip request with brotli bytes.
  const etag = input.encoding ? `${base.slice(0, -1)}-${input.encoding}"` : base;
  const lastModified = new Date(Math.floor(input.mtimeMs / 1000) * 1000).toUTCString();
  const headers: Array<readonly [string, string]> = [['Content-Type', input.contentType]];
  if (input.encoding) headers.push(['Content-Encoding', input.encoding]);
  const vary = input.negotiated ? VARY_ENCODING : [];
  headers.push(['ETag', etag], ['Last-Modified', lastModified], ['Accept-Ranges', 'bytes'], ...input.policy, ...vary);
  return {
    absolute: input.absolute,
    size: input.size,
    mtimeMs: input.mtimeMs,
    etag,
    lastModified,
    headers,
    head: new PreparedHead([...headers, ['Content-Length', String(input.size)]]),
    notModifiedHead: new PreparedHead([['ETag', etag], ['Last-Modified', lastModified], ...input.policy, ...vary]),
    body: input.body,
  };
}

/**
 * Reads a whole file through one descriptor, so the bytes and the stat describe the same file;
 * undefined when it is not a regular file any more or shrank while being read.
 */
export function readWhole(absolute: string): { st: fs.Stats; body: Buffer } | undefined {
  let fd: number;
  try {
    fd = fs.openSync(absolute, 'r');
  } catch {
    return undefined;
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) return undefined;
    const body = Buffer.allocUnsafe(st.size);
    let offset = 0;
    while (offset < st.size) {
      const n = fs.readSync(fd, body, offset, st.size - offset, offset);
      if (n === 0) break;
      offset += n;
    }
    return offset === st.size ? { st, body } : undefined;
  } catch {
    return undefined;
  } finally {
    fs.closeSync(fd);
  }
}

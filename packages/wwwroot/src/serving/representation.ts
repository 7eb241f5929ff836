import fs from 'node:fs';
import { PreparedHead, type HeaderPairs } from '@ack/host';
import type { Encoding } from './encoding.js';

/**
 * One representation as sent, the one type every answer is made from (docs/static-files.md
 * "One send path"): a file on disk, a precompressed sidecar, a copy compressed once in memory, or
 * bytes fixed at start (the shared-file manifest, the loader). Its validators and header blocks
 * are worked out once, when it is made, so a request only replays them.
 */
export interface Representation {
  /** The file streamed when `body` is not held; undefined for bytes made in memory (always held). */
  readonly absolute: string | undefined;
  readonly size: number;
  /**
   * Modification time of a file; undefined for bytes made in memory, which carry no
   * `Last-Modified` and no `Accept-Ranges` and are always sent whole.
   */
  readonly mtimeMs: number | undefined;
  readonly etag: string;
  /** `Last-Modified`; empty for bytes made in memory (`If-Modified-Since` then never matches). */
  readonly lastModified: string;
  /** Content-Type, Content-Encoding, ETag, Last-Modified, Accept-Ranges, the cache policy, Vary and any extras. */
  readonly headers: HeaderPairs;
  /** The head of a 200 with the whole representation: `headers` and its Content-Length. */
  readonly head: PreparedHead;
  /**
   * The head of a 304: ETag, the cache policy, Vary and any extras; what RFC 9110 15.4.5 lists
   * (no Last-Modified: with an ETag it guides no cache update), so a cache keeps the rest of its
   * stored 200.
   */
  readonly notModifiedHead: PreparedHead;
  /** The whole representation, when small enough to keep in memory. */
  readonly body: Buffer | undefined;
}

/**
 * What the sender answers from: the representation sent when the client asks for no encoding
 * (or none is offered), and the choice of another for a request's `Accept-Encoding`.
 */
export interface Resource extends Representation {
  /** The representation for a request's `Accept-Encoding`; absent when there is only this one. */
  readonly negotiate: ((acceptEncoding: string) => Representation) | undefined;
}

export interface RepresentationInput {
  absolute: string | undefined;
  size: number;
  /** A file's modification time; undefined for bytes made in memory (then `etagOf` is their validator). */
  mtimeMs: number | undefined;
  contentType: string;
  encoding: Encoding | undefined;
  /** The validator of the identity representation (a compressed copy's own ETag derives from it). */
  etagOf?: string;
  /** The cache policy: on the 200 and the 304 alike. */
  policy: HeaderPairs;
  /** The resource has other representations: every answer carries `Vary: Accept-Encoding`. */
  negotiated: boolean;
  /** Headers on the 200 and the 304 after all others (e.g. the manifest's `Ack-Live-Reload`). */
  extra?: HeaderPairs;
  body: Buffer | undefined;
}

const VARY_ENCODING = [['Vary', 'Accept-Encoding']] as const;

/**
 * `through`: a short tag of the file's real path when it is reached through a symlink (a symlinked
 * release folder): two releases may hold a file of one size and mtime with other bytes, and a
 * validator of one must not match the other (docs/static-files.md "Symlinked release folders").
 */
export function etagFor(size: number, mtimeMs: number, through = ''): string {
  const tag = through === '' ? '' : `-${through}`;
  return `"${size.toString(16)}-${Math.floor(mtimeMs * 1000).toString(16)}${tag}"`;
}

export function makeRepresentation(input: RepresentationInput): Representation {
  const base = input.etagOf ?? etagFor(input.size, input.mtimeMs ?? 0);
  // Each encoding has its own validator: a cache must never answer a gzip request with brotli bytes.
  const etag = input.encoding ? `${base.slice(0, -1)}-${input.encoding}"` : base;
  const file = input.mtimeMs !== undefined;
  const lastModified = file ? new Date(Math.floor(input.mtimeMs! / 1000) * 1000).toUTCString() : '';
  const validators: Array<readonly [string, string]> = [['ETag', etag]];
  if (file) validators.push(['Last-Modified', lastModified]);
  const after = [...input.policy, ...(input.negotiated ? VARY_ENCODING : []), ...(input.extra ?? [])];
  const headers: Array<readonly [string, string]> = [['Content-Type', input.contentType]];
  if (input.encoding) headers.push(['Content-Encoding', input.encoding]);
  headers.push(...validators);
  if (file) headers.push(['Accept-Ranges', 'bytes']);
  headers.push(...after);
  return {
    absolute: input.absolute,
    size: input.size,
    mtimeMs: input.mtimeMs,
    etag,
    lastModified,
    headers,
    head: new PreparedHead([...headers, ['Content-Length', String(input.size)]]),
    notModifiedHead: new PreparedHead([['ETag', etag], ...after]),
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

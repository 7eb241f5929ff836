import zlib from 'node:zlib';
import { ENCODINGS, type Encoding } from './encoding.js';
import { makeRepresentation, readWhole, type Representation } from './representation.js';
import type { HeaderPairs } from '@ack/host';

/**
 * `UseResponseComression` for files: a text file without a precompressed sidecar is compressed
 * once per version (brotli and gzip together) and the copies kept in a cache bounded in bytes, so
 * no request pays for compression again. A copy that does not save more than its own
 * `Content-Encoding` header costs is not kept (the file is sent as is). See docs/static-files.md.
 */
/** What the cache needs of a file (the file store's facts are one): the file as sent, its type and cache policy. */
export interface CompressionSource extends Representation {
  readonly absolute: string;
  readonly mtimeMs: number;
  readonly contentType: string;
  readonly policy: HeaderPairs;
}

export interface CompressionCache {
  /** The compressed copy of the file as it is now, or undefined when none is worth sending. */
  get(facts: CompressionSource, encoding: Encoding): Representation | undefined;
  stats(): { entries: number; bytes: number };
}

interface Entry {
  etag: string;
  bytes: number;
  copies: Partial<Record<Encoding, Representation>>;
}

/**
 * Bytes a compressed answer must save to be worth sending: the `Content-Encoding: gzip` line it
 * adds. A tiny file compressed can have a smaller body and still a larger answer.
 */
const MIN_SAVING = 'Content-Encoding: gzip\r\n'.length;

/** Files remembered (also those with no copy worth keeping), like the file store's bound. */
const MAX_ENTRIES = 20_000;

export interface CompressionCacheOptions {
  /** Bytes of compressed copies kept over all files (default 16 MiB). */
  maxBytes?: number;
  /** Larger files are not compressed (default 2 MiB). */
  maxFileBytes?: number;
}

export function createCompressionCache(options: CompressionCacheOptions = {}): CompressionCache {
  const maxBytes = options.maxBytes ?? 16 * 1024 * 1024;
  const maxFileBytes = options.maxFileBytes ?? 2 * 1024 * 1024;
  const entries = new Map<string, Entry>();
  let total = 0;

  const drop = (key: string) => {
    const old = entries.get(key);
    if (!old) return;
    entries.delete(key);
    total -= old.bytes;
  };

  const compress = (facts: CompressionSource): Entry => {
    const entry: Entry = { etag: facts.etag, bytes: 0, copies: {} };
    if (facts.size > maxFileBytes) return entry;
    let source = facts.body;
    if (!source) {
      const whole = readWhole(facts.absolute);
      // Changed since its facts were read: compress nothing now; the next request sees the change.
      if (!whole || whole.st.size !== facts.size || whole.st.mtimeMs !== facts.mtimeMs) return entry;
      source = whole.body;
    }
    const { policy } = facts;
    const copies = compressOnce(source);
    for (const encoding of ENCODINGS) {
      const body = copies[encoding];
      if (!body) continue;
      entry.copies[encoding] = makeRepresentation({
        absolute: facts.absolute,
        size: body.length,
        mtimeMs: facts.mtimeMs,
        contentType: facts.contentType,
        encoding,
        etagOf: facts.etag,
        policy,
        negotiated: true,
        body,
      });
      entry.bytes += body.length;
    }
    return entry;
  };

  return {
    get(facts, encoding) {
      let entry = entries.get(facts.absolute);
      if (!entry || entry.etag !== facts.etag) {
        drop(facts.absolute);
        entry = compress(facts);
        if (entry.bytes > maxBytes) return entry.copies[encoding];
        entries.set(facts.absolute, entry);
        total += entry.bytes;
        for (const key of entries.keys()) {
          if (total <= maxBytes && entries.size <= MAX_ENTRIES) break;
          drop(key);
        }
      }
      return entry.copies[encoding];
    },
    stats: () => ({ entries: entries.size, bytes: total }),
  };
}

/**
 * The brotli (quality 6) and gzip (level 9) copies of a body, each only when it is worth sending:
 * it must save more than the `Content-Encoding` line it adds.
 */
export function compressOnce(source: Buffer): Partial<Record<Encoding, Buffer>> {
  const copies: Partial<Record<Encoding, Buffer>> = {};
  for (const encoding of ENCODINGS) {
    const body =
      encoding === 'br'
        ? zlib.brotliCompressSync(source, {
            params: {
              [zlib.constants.BROTLI_PARAM_QUALITY]: 6,
              [zlib.constants.BROTLI_PARAM_SIZE_HINT]: source.length,
            },
          })
        : zlib.gzipSync(source, { level: 9 });
    if (source.length - body.length > MIN_SAVING) copies[encoding] = body;
  }
  return copies;
}

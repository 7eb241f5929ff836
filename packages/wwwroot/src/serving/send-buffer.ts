import crypto from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { PreparedHead, writePreparedHead } from '@ack/host';
import { notModified } from './conditional.js';
import { compressOnce } from './compression-cache.js';
import { chooseEncoding, ENCODINGS, isCompressible, type Encoding } from './encoding.js';

/**
 * A response body fixed at start (the shared-file manifest, the browser loader, the htmx sample's
 * assets): hashed once into a strong ETag, its headers worked out once, answered with the same
 * conditional rules as a static file. With `compress` (`UseResponseComression`), a text body is
 * also compressed once, brotli and gzip, each copy with its own ETag, chosen by the client's
 * `Accept-Encoding` like a file's (see docs/static-files.md).
 */
export interface FixedBody {
  /** The body as is. */
  readonly identity: FixedRepresentation;
  /** Compressed copies worth sending; when there is one, every answer carries `Vary: Accept-Encoding`. */
  readonly encoded: Partial<Record<Encoding, FixedRepresentation>>;
  readonly offered: readonly Encoding[];
}

export interface FixedRepresentation {
  readonly body: Buffer;
  readonly etag: string;
  /** Head of a 200: Content-Type, Content-Encoding, ETag, Cache-Control, Vary, Content-Length. */
  readonly head: PreparedHead;
  /** Head of a 304: ETag, Cache-Control and Vary. */
  readonly notModifiedHead: PreparedHead;
}

export interface FixedBodyOptions {
  /** Headers on the 200 and the 304 alike (e.g. the manifest's `Ack-Live-Reload`). */
  extraHeaders?: Readonly<Record<string, string>>;
  /** Keep brotli and gzip copies of a text body (`UseResponseComression`). */
  compress?: boolean;
}

export function fixedBody(
  body: Buffer,
  contentType: string,
  cacheControl: string,
  options: FixedBodyOptions = {},
): FixedBody {
  const etag = `"${crypto.createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  const copies = options.compress && isCompressible(contentType) ? compressOnce(body) : {};
  const offered = ENCODINGS.filter((encoding) => copies[encoding] !== undefined);
  const shared: Array<readonly [string, string]> = [['Cache-Control', cacheControl]];
  if (offered.length > 0) shared.push(['Vary', 'Accept-Encoding']);
  shared.push(...Object.entries(options.extraHeaders ?? {}));
  const representation = (bytes: Buffer, encoding?: Encoding): FixedRepresentation => {
    const tag = encoding ? `${etag.slice(0, -1)}-${encoding}"` : etag;
    const type: Array<readonly [string, string]> = [['Content-Type', contentType]];
    if (encoding) type.push(['Content-Encoding', encoding]);
    return {
      body: bytes,
      etag: tag,
      head: new PreparedHead([...type, ['ETag', tag], ...shared, ['Content-Length', String(bytes.length)]]),
      notModifiedHead: new PreparedHead([['ETag', tag], ...shared]),
    };
  };
  const encoded: Partial<Record<Encoding, FixedRepresentation>> = {};
  for (const encoding of offered) encoded[encoding] = representation(copies[encoding]!, encoding);
  return { identity: representation(body), encoded, offered };
}

/**
 * Answers a GET or HEAD with a fixed body, in the encoding the client accepts: 304 when
 * `If-None-Match` names that representation's ETag, else 200.
 */
export function sendBuffer(req: IncomingMessage, res: ServerResponse, fixed: FixedBody): void {
  const acceptEncoding = req.headers['accept-encoding'];
  let chosen = fixed.identity;
  if (fixed.offered.length > 0 && acceptEncoding !== undefined) {
    const encoding = chooseEncoding(acceptEncoding, fixed.offered);
    if (encoding) chosen = fixed.encoded[encoding]!;
  }
  const ifNoneMatch = req.headers['if-none-match'];
  if (ifNoneMatch !== undefined && notModified(ifNoneMatch, undefined, chosen.etag, '')) {
    writePreparedHead(res, 304, chosen.notModifiedHead);
    res.end();
    return;
  }
  writePreparedHead(res, 200, chosen.head);
  res.end(req.method === 'HEAD' ? undefined : chosen.body);
}

import crypto from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HeaderPairs } from './cache-policy.js';
import { notModified } from './conditional.js';

/**
 * A response body fixed at start (the shared-file manifest, the htmx sample's assets): hashed once
 * into a strong ETag, its headers worked out once, answered with the same conditional rules as a
 * static file (see docs/static-files.md).
 */
export interface FixedBody {
  readonly body: Buffer;
  readonly etag: string;
  /** Headers of a 200: Content-Type, ETag, Cache-Control, Content-Length. */
  readonly headers: HeaderPairs;
  /** Headers of a 304: ETag and Cache-Control. */
  readonly notModifiedHeaders: HeaderPairs;
}

/** `extraHeaders` go on the 200 and the 304 alike (e.g. the manifest's `Ack-Live-Reload`). */
export function fixedBody(
  body: Buffer,
  contentType: string,
  cacheControl: string,
  extraHeaders: Readonly<Record<string, string>> = {},
): FixedBody {
  const etag = `"${crypto.createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  const extra = Object.entries(extraHeaders);
  return {
    body,
    etag,
    headers: [
      ['Content-Type', contentType],
      ['ETag', etag],
      ['Cache-Control', cacheControl],
      ['Content-Length', String(body.length)],
      ...extra,
    ],
    notModifiedHeaders: [['ETag', etag], ['Cache-Control', cacheControl], ...extra],
  };
}

/** Answers a GET or HEAD with a fixed body: 304 when `If-None-Match` names its ETag, else 200. */
export function sendBuffer(req: IncomingMessage, res: ServerResponse, fixed: FixedBody): void {
  const ifNoneMatch = req.headers['if-none-match'];
  if (ifNoneMatch !== undefined && notModified(ifNoneMatch, undefined, fixed.etag, '')) {
    res.statusCode = 304;
    for (const [name, value] of fixed.notModifiedHeaders) res.setHeader(name, value);
    res.end();
    return;
  }
  for (const [name, value] of fixed.headers) res.setHeader(name, value);
  res.end(req.method === 'HEAD' ? undefined : fixed.body);
}

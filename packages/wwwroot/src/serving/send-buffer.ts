import crypto from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { PreparedHead, writePreparedHead } from '@ack/host';
import { notModified } from './conditional.js';

/**
 * A response body fixed at start (the shared-file manifest, the htmx sample's assets): hashed once
 * into a strong ETag, its headers worked out once, answered with the same conditional rules as a
 * static file (see docs/static-files.md).
 */
export interface FixedBody {
  readonly body: Buffer;
  readonly etag: string;
  /** Head of a 200: Content-Type, ETag, Cache-Control, Content-Length. */
  readonly head: PreparedHead;
  /** Head of a 304: ETag and Cache-Control. */
  readonly notModifiedHead: PreparedHead;
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
    head: new PreparedHead([
      ['Content-Type', contentType],
      ['ETag', etag],
      ['Cache-Control', cacheControl],
      ['Content-Length', String(body.length)],
      ...extra,
    ]),
    notModifiedHead: new PreparedHead([['ETag', etag], ['Cache-Control', cacheControl], ...extra]),
  };
}

/** Answers a GET or HEAD with a fixed body: 304 when `If-None-Match` names its ETag, else 200. */
export function sendBuffer(req: IncomingMessage, res: ServerResponse, fixed: FixedBody): void {
  const ifNoneMatch = req.headers['if-none-match'];
  if (ifNoneMatch !== undefined && notModified(ifNoneMatch, undefined, fixed.etag, '')) {
    writePreparedHead(res, 304, fixed.notModifiedHead);
    res.end();
    return;
  }
  writePreparedHead(res, 200, fixed.head);
  res.end(req.method === 'HEAD' ? undefined : fixed.body);
}

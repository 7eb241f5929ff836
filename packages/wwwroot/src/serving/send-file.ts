import type { IncomingMessage, ServerResponse } from 'node:http';
import parseRange from 'range-parser';
import type { FileFacts } from './file-store.js';
import type { Representation } from './representation.js';
import { notModified } from './conditional.js';
import { streamFileRange } from './file-stream.js';
import { setHeaderPairs, writePreparedHead } from '@ack/host';

/**
 * Answers a GET or HEAD with a file: the representation the client's `Accept-Encoding` asks for
 * (a sidecar or a compressed copy, when the file has them), 304 when the client's copy of it is
 * current (`If-None-Match`, `If-Modified-Since`), 206 for one satisfiable `Range` (416 when none
 * is), else 200. Small files come from memory; others stream from disk. A 200 or 304 is written
 * with the representation's prepared head and the edge's headers in one call (docs/pipeline.md).
 */
export function sendFile(req: IncomingMessage, res: ServerResponse, file: FileFacts): void {
  const h = req.headers;
  const acceptEncoding = h['accept-encoding'];
  const facts: Representation =
    file.negotiate !== undefined && acceptEncoding !== undefined ? file.negotiate(acceptEncoding) : file;
  if (
    (h['if-none-match'] !== undefined || h['if-modified-since'] !== undefined) &&
    notModified(h['if-none-match'], h['if-modified-since'], facts.etag, facts.lastModified)
  ) {
    writePreparedHead(res, 304, facts.notModifiedHead);
    res.end();
    return;
  }
  if (h.range === undefined || req.method !== 'GET' || !rangeStillValid(h['if-range'] as string | undefined, facts)) {
    writePreparedHead(res, 200, facts.head);
    if (req.method === 'HEAD' || facts.size === 0) res.end();
    else if (facts.body) res.end(facts.body);
    else streamFileRange(res, facts.absolute, 0, facts.size - 1);
    return;
  }
  sendRange(res, facts, h.range);
}

/** A GET with a `Range` that applies to this version of the file. */
function sendRange(res: ServerResponse, facts: Representation, range: string): void {
  setHeaderPairs(res, facts.headers);
  const ranges = parseRange(facts.size, range, { combine: true });
  if (ranges === -1) {
    res.statusCode = 416;
    res.setHeader('Content-Range', `bytes */${facts.size}`);
    res.setHeader('Content-Length', 0);
    res.end();
    return;
  }
  let start = 0;
  let end = facts.size - 1;
  // A malformed header (-2), another unit, or several ranges: answer the whole file (RFC 9110 allows it).
  if (ranges !== -2 && ranges.type === 'bytes' && ranges.length === 1) {
    start = ranges[0]!.start;
    end = ranges[0]!.end;
    res.statusCode = 206;
    res.setHeader('Content-Range', `bytes ${start}-${end}/${facts.size}`);
  }
  const length = facts.size === 0 ? 0 : end - start + 1;
  res.setHeader('Content-Length', length);
  if (length === 0) {
    res.end();
    return;
  }
  if (facts.body) {
    res.end(start === 0 && length === facts.body.length ? facts.body : facts.body.subarray(start, end + 1));
    return;
  }
  streamFileRange(res, facts.absolute, start, end);
}

/** `If-Range` with a strong ETag or an HTTP date: the range applies only if the file is that version. */
function rangeStillValid(ifRange: string | undefined, facts: Representation): boolean {
  if (ifRange === undefined) return true;
  if (ifRange.startsWith('"') || ifRange.startsWith('W/')) return ifRange === facts.etag;
  const since = Date.parse(ifRange);
  return !Number.isNaN(since) && Math.floor(facts.mtimeMs / 1000) * 1000 <= since;
}

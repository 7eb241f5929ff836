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
  const answer = rangeAnswer(facts.size, range);
  if (answer.status === 416) {
    res.statusCode = 416;
    res.setHeader('Content-Range', `bytes */${facts.size}`);
    res.setHeader('Content-Length', 0);
    res.end();
    return;
  }
  let start = 0;
  let end = facts.size - 1;
  if (answer.status === 206) {
    ({ start, end } = answer);
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

/** What a `Range` header makes of a representation of `size` bytes: the whole, one slice, or 416. */
export type RangeAnswer = { status: 200 } | { status: 206; start: number; end: number } | { status: 416 };

/**
 * The answer to a `Range` header (docs/static-files.md "Responses"): one satisfiable byte range
 * (overlapping or adjacent ones are merged first) is a 206 of that slice; a malformed header,
 * another unit or several ranges is the whole representation (HTTP lets a server ignore `Range`);
 * nothing satisfiable is 416. Pure.
 */
export function rangeAnswer(size: number, range: string): RangeAnswer {
  const eq = range.indexOf('=');
  // HTTP: a unit other than bytes (compared ignoring case) is ignored, even where its numbers
  // would not fit the file; range-parser would answer those with 416.
  if (eq === -1 || range.slice(0, eq).toLowerCase() !== 'bytes') return { status: 200 };
  // HTTP: a suffix longer than the file asks for all of it; range-parser would call it unsatisfiable.
  const set = range
    .slice(eq + 1)
    .split(',')
    .map((part) => {
      const suffix = /^\s*-\s*(\d+)\s*$/.exec(part);
      return suffix && Number(suffix[1]) > size ? `-${size}` : part;
    });
  const ranges = parseRange(size, `bytes=${set.join(',')}`, { combine: true });
  if (ranges === -1) return { status: 416 };
  if (ranges !== -2 && ranges.length === 1) return { status: 206, start: ranges[0]!.start, end: ranges[0]!.end };
  return { status: 200 };
}

/** `If-Range` with a strong ETag or an HTTP date: the range applies only if the file is that version. */
function rangeStillValid(ifRange: string | undefined, facts: Representation): boolean {
  return ifRange === undefined || ifRangeHolds(ifRange, facts.etag, facts.mtimeMs);
}

/**
 * Whether an `If-Range` validator names this version: an entity tag must equal the (strong) ETag,
 * so a weak one never does; a date must not be older than the modification time (second
 * precision). Pure.
 */
export function ifRangeHolds(ifRange: string, etag: string, mtimeMs: number): boolean {
  if (ifRange.startsWith('"') || ifRange.startsWith('W/')) return ifRange === etag;
  const since = Date.parse(ifRange);
  return !Number.isNaN(since) && Math.floor(mtimeMs / 1000) * 1000 <= since;
}

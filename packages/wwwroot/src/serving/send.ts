import { sendProblem, writePreparedHead, type RawRequest, type RawResponse } from '@ack/host';
import { setHeaderPairs } from '@ack/host/serving';
import { wwwrootProblems } from '../problem-codes.js';
import type { Representation, Resource } from './representation.js';
import { notModified, preconditionFailed } from './conditional.js';
import { streamFileRange } from './file-stream.js';
import { ifRangeHolds, rangeAnswer } from './ranges.js';

/**
 * The one send path (docs/static-files.md "One send path"): answers a GET or HEAD with a resource,
 * a file or bytes in memory. The representation the client's `Accept-Encoding` asks for (a
 * sidecar or a compressed copy, when there are any); 412 when the client asked for another version
 * (`If-Match`, `If-Unmodified-Since`); 304 when the client's copy of it is current
 * (`If-None-Match`, `If-Modified-Since`); for a file, 206 for one satisfiable `Range` (416 when
 * none is); else 200. Held bytes go in one `end`; others stream from disk. A 200 or 304 is written
 * with the representation's prepared head and the edge's headers in one call (docs/pipeline.md),
 * over HTTP/1.1 and HTTP/2 alike.
 */
export function send(req: Pick<RawRequest, 'method' | 'headers'>, res: RawResponse, resource: Resource): void {
  const h = req.headers;
  const acceptEncoding = h['accept-encoding'];
  const chosen: Representation =
    resource.negotiate !== undefined && acceptEncoding !== undefined ? resource.negotiate(acceptEncoding) : resource;
  if (
    (h['if-match'] !== undefined || h['if-unmodified-since'] !== undefined) &&
    preconditionFailed(h['if-match'], h['if-unmodified-since'], chosen.etag, chosen.lastModified)
  ) {
    sendProblem(res, { status: 412, code: wwwrootProblems.REQUEST_PRECONDITION_FAILED.code }, req.method);
    return;
  }
  if (
    (h['if-none-match'] !== undefined || h['if-modified-since'] !== undefined) &&
    notModified(h['if-none-match'], h['if-modified-since'], chosen.etag, chosen.lastModified)
  ) {
    writePreparedHead(res, 304, chosen.notModifiedHead);
    res.end();
    return;
  }
  if (
    h.range === undefined ||
    req.method !== 'GET' ||
    chosen.mtimeMs === undefined ||
    !rangeStillValid(h['if-range'], chosen.etag, chosen.mtimeMs)
  ) {
    writePreparedHead(res, 200, chosen.head);
    if (req.method === 'HEAD' || chosen.size === 0) res.end();
    else if (chosen.body) res.end(chosen.body);
    else streamFileRange(res, chosen.absolute!, 0, chosen.size - 1);
    return;
  }
  sendRange(res, chosen, h.range);
}

/** A GET with a `Range` that applies to this version of the file. */
function sendRange(res: RawResponse, chosen: Representation, range: string): void {
  setHeaderPairs(res, chosen.headers);
  const answer = rangeAnswer(chosen.size, range);
  if (answer.status === 416) {
    res.statusCode = 416;
    res.setHeader('Content-Range', `bytes */${chosen.size}`);
    res.setHeader('Content-Length', 0);
    res.end();
    return;
  }
  let start = 0;
  let end = chosen.size - 1;
  if (answer.status === 206) {
    ({ start, end } = answer);
    res.statusCode = 206;
    res.setHeader('Content-Range', `bytes ${start}-${end}/${chosen.size}`);
  }
  const length = chosen.size === 0 ? 0 : end - start + 1;
  res.setHeader('Content-Length', length);
  if (length === 0) {
    res.end();
    return;
  }
  if (chosen.body) {
    res.end(start === 0 && length === chosen.body.length ? chosen.body : chosen.body.subarray(start, end + 1));
    return;
  }
  streamFileRange(res, chosen.absolute!, start, end);
}

/** `If-Range` with a strong ETag or an HTTP date: the range applies only if the file is that version. */
function rangeStillValid(ifRange: string | string[] | undefined, etag: string, mtimeMs: number): boolean {
  return ifRange === undefined || (typeof ifRange === 'string' && ifRangeHolds(ifRange, etag, mtimeMs));
}

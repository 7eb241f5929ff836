import type { IncomingHttpHeaders, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import http2 from 'node:http2';
import type { Express } from 'express';
import type { AckRequest } from '../http/exchange.js';
import {
  AckServerResponse,
  addOwedHeaders,
  EDGE_HEADERS_OWED,
  type OwesEdgeHeaders,
} from '../http/response-head/response.js';
import type { EdgeHeaders } from '../http/response-head/prepared-head.js';
import { AckIncomingMessage } from '../http/upgrade-offer.js';

/**
 * HTTP/2 requests in the host's one pipeline (docs/protocols.md). Node's compatibility objects
 * (`Http2ServerRequest`/`Http2ServerResponse`) implement most of the HTTP/1 request and response
 * API, but Express swaps each request's prototype for its own, built on `http.IncomingMessage`
 * and `http.ServerResponse`, which strips the HTTP/2 getters (`headers`, `url`, `socket`...) and
 * makes `res.end` write HTTP/1 to a socket that does not exist. Libraries also call HTTP/1
 * internals (`res._implicitHeader`, `res._header`: express-session), and a connection-specific
 * header set on an HTTP/2 response makes Node throw when the headers are sent.
 *
 * So HTTP/2 requests get their own Express application object over the same middleware and
 * routers, whose request and response prototypes put Express's methods on top of the HTTP/2
 * classes below, and the request is given that prototype before the first phase runs, so raw
 * handlers and Express see one object.
 */

/**
 * Largest request header list: 16 KiB, Node's HTTP/1 limit (answered 431). Over HTTP/2 the
 * host checks it itself and answers the same 431 (nghttp2 only refuses lists over 64 KiB);
 * counted as RFC 9113 6.5.2 does: name + value + 32 bytes a field.
 */
export const MAX_HEADER_BYTES = 16 * 1024;

export function headerListBytes(rawHeaders: readonly string[]): number {
  let total = 0;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) total += rawHeaders[i]!.length + rawHeaders[i + 1]!.length + 32;
  return total;
}

/** Headers that describe an HTTP/1 connection; RFC 9113 8.2.2 forbids them in HTTP/2. */
const CONNECTION_SPECIFIC = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade']);

export function isConnectionSpecific(name: string): boolean {
  return CONNECTION_SPECIFIC.has(name.toLowerCase());
}

/**
 * Ends a stream whose answer is unfinished (a file that shrank while it was sent, a failure after
 * the head went out) with `RST_STREAM` INTERNAL_ERROR. A bare `stream.destroy()` resets it with
 * NO_ERROR, which Node's client (and others) take as a complete answer, however short its body.
 */
export function resetUnfinished(stream: http2.ServerHttp2Stream, error?: Error): void {
  if (error !== undefined) stream.destroy(error);
  else if (!stream.destroyed) stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
}

/** The HTTP/2 response with the HTTP/1 behaviour middleware relies on. */
export class AckHttp2Response<Request extends http2.Http2ServerRequest = http2.Http2ServerRequest>
  extends http2.Http2ServerResponse<Request>
  implements OwesEdgeHeaders
{
  [EDGE_HEADERS_OWED]: EdgeHeaders | undefined = undefined;

  override setHeader(name: string, value: number | string | readonly string[]): void {
    // Dropped, not thrown: the host and libraries set `Connection: close` (e.g. on a 413) for HTTP/1.
    if (!isConnectionSpecific(name)) super.setHeader(name, value);
  }

  // Headers as an object or as a flat `[name, value, ...]` list: newer @types/node declare both, so
  // the override takes both and a consumer's type check passes with any of them.
  override writeHead(
    statusCode: number,
    reasonOrHeaders?: string | OutgoingHttpHeaders | readonly string[],
    headers?: OutgoingHttpHeaders | readonly string[],
  ): this {
    addOwedHeaders(this, statusCode);
    const given = typeof reasonOrHeaders === 'string' ? headers : (reasonOrHeaders ?? headers);
    const kept: OutgoingHttpHeaders = {};
    for (const [name, value] of headerEntries(given)) if (!isConnectionSpecific(name)) kept[name] = value;
    // HTTP/2 has no reason phrase; the status code is the whole status line.
    return super.writeHead(statusCode, kept);
  }

  /** A response destroyed midway resets its stream as unfinished (see `resetUnfinished`). */
  override destroy(error?: Error): this {
    resetUnfinished(this.stream, error);
    return this;
  }

  /** `ServerResponse._implicitHeader`: writes the head now (express-session calls it). */
  _implicitHeader(): void {
    if (!this.headersSent) this.writeHead(this.statusCode);
  }

  /** `ServerResponse._header` is set once the head is written; only its truthiness is read. */
  get _header(): boolean {
    return this.headersSent;
  }
}

function headerEntries(
  headers: OutgoingHttpHeaders | readonly string[] | undefined,
): Array<[string, OutgoingHttpHeaders[string]]> {
  if (headers === undefined) return [];
  if (!isHeaderList(headers)) return Object.entries(headers);
  // A name may repeat in a list (two Set-Cookie lines): its values become one list.
  const out = new Map<string, string[]>();
  for (let i = 0; i + 1 < headers.length; i += 2) {
    const name = headers[i]!.toLowerCase();
    out.set(name, [...(out.get(name) ?? []), headers[i + 1]!]);
  }
  return [...out].map(([name, values]) => [name, values.length === 1 ? values[0] : values]);
}

function isHeaderList(headers: OutgoingHttpHeaders | readonly string[]): headers is readonly string[] {
  return Array.isArray(headers);
}

/**
 * Server options that make Node build HTTP/2 responses as `AckHttp2Response`, and HTTP/1.1 requests
 * on the same port as on the host's HTTP/1.1 servers (an upgrade offer other than WebSocket ignored).
 */
export const HTTP2_SERVER_CLASSES = {
  Http2ServerResponse: AckHttp2Response,
  Http1ServerResponse: AckServerResponse,
  Http1IncomingMessage: AckIncomingMessage,
};

/**
 * Prepares an HTTP/2 request and response for the pipeline: Express's prototypes (from `app`,
 * made by `createHttp2Express`), a `host` header from `:authority` (HTTP/2 carries the host there),
 * and a body marker: a request with a body but no `Content-Length` is marked
 * `Transfer-Encoding: chunked` in its header view, because body parsers (type-is) only look for a
 * body when one of the two is present, as HTTP/1 framing guarantees.
 */
export function adaptHttp2(
  app: Express,
  req: http2.Http2ServerRequest,
  res: AckHttp2Response,
): { req: AckRequest; res: ServerResponse } {
  const headers: IncomingHttpHeaders = req.headers;
  if (headers.host === undefined && typeof headers[':authority'] === 'string') headers.host = headers[':authority'];
  if (headers['content-length'] === undefined && !req.stream.endAfterHeaders) headers['transfer-encoding'] = 'chunked';
  // The prototypes Express itself sets when the request reaches it (app.handle); set here so the
  // raw phases before Express see the same object. The HTTP/1 interface they are typed with is the
  // one the compatibility classes implement (docs/protocols.md lists what they use).
  return { req: Object.setPrototypeOf(req, app.request), res: Object.setPrototypeOf(res, app.response) };
}

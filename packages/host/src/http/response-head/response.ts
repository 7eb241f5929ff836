import http, { type OutgoingHttpHeader, type OutgoingHttpHeaders } from 'node:http';
import type { RawResponse } from '../exchange.js';
import { EdgeHeaders, mergeVary, type HeaderFields, type HeaderPairs, type PreparedHead } from './prepared-head.js';

/**
 * The edge's headers ride on the response until its head is written (docs/pipeline.md "Response
 * heads"): a responder with a prepared head writes both in one `writeHead`; any other responder
 * (Express, a problem, a stream) gets them added when it writes its head, under what it set itself.
 */
export const EDGE_HEADERS_OWED = Symbol('ack.edgeHeadersOwed');

/** A response that holds the edge's headers until its head is written. */
export interface OwesEdgeHeaders {
  [EDGE_HEADERS_OWED]: EdgeHeaders | undefined;
}

/**
 * A response that takes a prepared head as one header object with its status (HTTP/2's stream
 * API, `pipeline/http2-stream.ts`) rather than as a flat list for `writeHead`.
 */
export const WRITE_HEAD_FIELDS = Symbol('ack.writeHeadFields');

interface WritesHeadFields {
  [WRITE_HEAD_FIELDS](fields: HeaderFields): void;
}

/** What setting headers needs of a response (HTTP/1.1 or HTTP/2). */
interface HeaderTarget {
  getHeader(name: string): number | string | string[] | undefined;
  setHeader(name: string, value: string): unknown;
}

function owes(res: RawResponse): res is RawResponse & OwesEdgeHeaders {
  return EDGE_HEADERS_OWED in res;
}

function writesHeadFields(res: RawResponse): res is RawResponse & WritesHeadFields {
  return WRITE_HEAD_FIELDS in res;
}

/** The host's HTTP/1.1 response (its listeners make every response one of these). */
export class AckServerResponse<Request extends http.IncomingMessage = http.IncomingMessage>
  extends http.ServerResponse<Request>
  implements OwesEdgeHeaders
{
  [EDGE_HEADERS_OWED]: EdgeHeaders | undefined = undefined;

  override writeHead(
    statusCode: number,
    reasonOrHeaders?: string | OutgoingHttpHeaders | OutgoingHttpHeader[],
    headers?: OutgoingHttpHeaders | OutgoingHttpHeader[],
  ): this {
    addOwedHeaders(this, statusCode);
    return typeof reasonOrHeaders === 'string'
      ? super.writeHead(statusCode, reasonOrHeaders, headers)
      : super.writeHead(statusCode, reasonOrHeaders);
  }
}

/**
 * An edge handler's headers for this response (`pairs`: a constant list made at start): held by
 * the host's responses until the head is written, set at once on any other.
 */
export function oweEdgeHeaders(res: RawResponse, pairs: HeaderPairs): void {
  if (owes(res)) res[EDGE_HEADERS_OWED] = (res[EDGE_HEADERS_OWED] ?? EdgeHeaders.NONE).plus(pairs);
  else addHeaderPairs(res, pairs);
}

/**
 * Called by a response's `writeHead` before the head goes out: the edge's headers a responder did
 * not set itself (a `Vary` is merged, the edge's names first); of them, a 304 gets only those
 * RFC 9110 lists for it (`EdgeHeaders.notModified`).
 */
export function addOwedHeaders(res: OwesEdgeHeaders & HeaderTarget, status: number): void {
  const edge = res[EDGE_HEADERS_OWED];
  if (edge === undefined) return;
  res[EDGE_HEADERS_OWED] = undefined;
  addHeaderPairs(res, edge.forStatus(status).pairs);
}

/**
 * Writes a prepared head with the edge's headers: one `writeHead` with the joined flat list when
 * nothing else was set on the response (the common case), else header by header.
 */
export function writePreparedHead(res: RawResponse, status: number, head: PreparedHead): void {
  if (owes(res) && res.getHeaderNames().length === 0) {
    const edge = res[EDGE_HEADERS_OWED]?.forStatus(status);
    res[EDGE_HEADERS_OWED] = undefined;
    if (writesHeadFields(res)) res[WRITE_HEAD_FIELDS](head.fieldsWith(edge, status));
    else res.writeHead(status, head.flatWith(edge));
    return;
  }
  setHeaderPairs(res, head.pairs);
  res.writeHead(status);
}

/** Sets pairs on a response, replacing what is there; a `Vary` is merged with the one there. */
export function setHeaderPairs(res: HeaderTarget, pairs: HeaderPairs): void {
  for (const [name, value] of pairs) {
    const prior = res.getHeader(name);
    res.setHeader(name, prior !== undefined && isVary(name) ? mergeVary(String(prior), value) : value);
  }
}

/** Adds pairs a response does not have yet (the edge's never override a responder's); `Vary` merged, ours first. */
function addHeaderPairs(res: HeaderTarget, pairs: HeaderPairs): void {
  for (const [name, value] of pairs) {
    const prior = res.getHeader(name);
    if (prior === undefined) res.setHeader(name, value);
    else if (isVary(name)) res.setHeader(name, mergeVary(value, String(prior)));
  }
}

const isVary = (name: string) => name.length === 4 && name.toLowerCase() === 'vary';

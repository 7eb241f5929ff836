import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import type { Http2Session, ServerHttp2Stream } from 'node:http2';
import type { RawRequest, RawResponse, RequestContext } from '../http/exchange.js';
import {
  addOwedHeaders,
  EDGE_HEADERS_OWED,
  WRITE_HEAD_FIELDS,
  type OwesEdgeHeaders,
} from '../http/response-head/response.js';
import type { EdgeHeaders, HeaderFields } from '../http/response-head/prepared-head.js';
import { isConnectionSpecific, resetUnfinished } from './http2-adapter.js';

/**
 * An HTTP/2 request answered on Node's stream API (docs/protocols.md "The stream lane"): the raw
 * phases' request and response over one `ServerHttp2Stream`, without Node's compatibility objects
 * (`Http2ServerRequest`/`Http2ServerResponse`), whose construction and per-stream listeners cost
 * more than the whole of a static answer. Only requests without a body take this lane, so the
 * request is its headers alone.
 */
export class Http2StreamRequest implements RawRequest {
  readonly method: string;
  url: string;
  readonly httpVersion = '2.0';
  readonly socket: { readonly remoteAddress?: string; readonly encrypted?: boolean };
  // Set by the edge (`edge.begin`) before any phase reads it.
  ack!: RequestContext;

  constructor(
    readonly stream: ServerHttp2Stream,
    readonly headers: IncomingHttpHeaders,
    readonly rawHeaders: string[],
  ) {
    this.method = String(headers[':method']);
    this.url = String(headers[':path'] ?? '/');
    // HTTP/2 carries the host in `:authority` (as the compatibility path does, http2-adapter.ts).
    if (headers.host === undefined && typeof headers[':authority'] === 'string') headers.host = headers[':authority'];
    this.socket = peerOf(stream.session);
  }
}

/** The peer of a session, as its requests read it (`remoteAddress`, `encrypted`). */
type Peer = Http2StreamRequest['socket'];
const PEER = Symbol('ack.sessionPeer');
const NO_PEER: Peer = {};

/**
 * A session's address and scheme, read once per session (they do not change while it lives):
 * `session.socket` is a Proxy over the socket, and reading through it on every request showed in
 * the static path's CPU profile (docs/benchmarks.md, "HTTP/2 static path").
 */
function peerOf(session: (Http2Session & { [PEER]?: Peer }) | undefined): Peer {
  if (session === undefined) return NO_PEER;
  let peer = session[PEER];
  if (peer === undefined) {
    const socket = session.socket as { remoteAddress?: string; encrypted?: boolean } | undefined;
    peer = session[PEER] = { remoteAddress: socket?.remoteAddress, encrypted: socket?.encrypted };
  }
  return peer;
}

/**
 * The response on the stream: headers are held (lower-case names) until the head goes out, in
 * one `respond` with the first `write` or `end`, so a response without a body is one HEADERS frame
 * that ends the stream. A prepared head comes as one header object made once
 * (`writePreparedHead`). Bodies go through `stream.write`, which respects HTTP/2 flow control: it
 * returns false while the peer's window is full and the stream emits `drain` when it opens.
 */
export class Http2StreamResponse implements RawResponse, OwesEdgeHeaders {
  [EDGE_HEADERS_OWED]: EdgeHeaders | undefined = undefined;
  statusCode = 200;
  private fields: Record<string, number | string | string[]> | undefined;
  /** The head given to `writeHead` or a prepared head, sent with the first byte or the end. */
  private pending: HeaderFields | undefined;
  private ended = false;

  constructor(readonly stream: ServerHttp2Stream) {}

  get headersSent(): boolean {
    return this.pending !== undefined || this.stream.headersSent;
  }

  get writableEnded(): boolean {
    return this.ended;
  }

  get destroyed(): boolean {
    return this.stream.destroyed;
  }

  getHeader(name: string): number | string | string[] | undefined {
    return this.fields?.[name.toLowerCase()];
  }

  getHeaderNames(): string[] {
    return this.fields === undefined ? [] : Object.keys(this.fields);
  }

  setHeader(name: string, value: number | string | readonly string[]): this {
    if (this.headersSent) throw new Error(`Cannot set header ${name} after the head was sent`);
    // Dropped, as on the compatibility response: RFC 9113 8.2.2 forbids them over HTTP/2.
    if (isConnectionSpecific(name)) return this;
    (this.fields ??= Object.create(null) as Record<string, number | string | string[]>)[name.toLowerCase()] =
      typeof value === 'object' ? [...value] : value;
    return this;
  }

  removeHeader(name: string): void {
    if (this.fields !== undefined) delete this.fields[name.toLowerCase()];
  }

  writeHead(statusCode: number, headers?: OutgoingHttpHeaders | string[]): this {
    if (this.headersSent) return this;
    this.statusCode = statusCode;
    if (Array.isArray(headers)) {
      // A name may repeat in a flat list (two Set-Cookie lines): its values become one list.
      const seen = new Set<string>();
      for (let i = 0; i + 1 < headers.length; i += 2) {
        const name = headers[i]!.toLowerCase();
        const prior = seen.has(name) ? this.getHeader(name) : undefined;
        this.setHeader(name, prior === undefined ? headers[i + 1]! : [...[prior].flat().map(String), headers[i + 1]!]);
        seen.add(name);
      }
    } else if (headers !== undefined)
      for (const [name, value] of Object.entries(headers)) if (value !== undefined) this.setHeader(name, value);
    addOwedHeaders(this, statusCode);
    this.pending = { ...this.fields, ':status': statusCode };
    return this;
  }

  [WRITE_HEAD_FIELDS](fields: HeaderFields): void {
    this.statusCode = Number(fields[':status']);
    this.pending = fields;
  }

  write(chunk: Uint8Array | string, callback?: (error?: Error | null) => void): boolean {
    if (this.ended || !this.respond(false)) return false;
    // A HEAD request's stream ended with its head (Node ends it then): its body is not sent.
    if (this.stream.writableEnded) {
      callback?.();
      return true;
    }
    return this.stream.write(chunk, callback);
  }

  end(chunk?: Uint8Array | string): this {
    if (this.ended) return this;
    this.ended = true;
    const empty = chunk === undefined || chunk.length === 0;
    if (this.respond(empty) && !this.stream.writableEnded) {
      if (empty) this.stream.end();
      else this.stream.end(chunk);
    }
    return this;
  }

  /**
   * Ends the stream unfinished: a reset with INTERNAL_ERROR, which tells the client the body is
   * not whole (a reset with NO_ERROR, what a bare `stream.destroy()` sends, reads as complete).
   */
  destroy(error?: Error): this {
    resetUnfinished(this.stream, error);
    return this;
  }

  /**
   * `finish` is heard when the stream closes, as on the compatibility response (an access line is
   * written for a stream the client reset too); `close` and `drain` are the stream's own.
   */
  once(event: 'finish' | 'close' | 'drain', listener: () => void): this {
    this.stream.once(event === 'finish' ? 'close' : event, listener);
    return this;
  }

  on(event: 'close', listener: () => void): this {
    this.stream.on(event, listener);
    return this;
  }

  off(event: 'finish' | 'close' | 'drain', listener: () => void): this {
    this.stream.off(event === 'finish' ? 'close' : event, listener);
    return this;
  }

  /** Sends the head unless it went already; false when the stream is gone (the client reset it). */
  private respond(endStream: boolean): boolean {
    const stream = this.stream;
    if (stream.destroyed || stream.closed) return false;
    if (stream.headersSent) return true;
    if (this.pending === undefined) this.writeHead(this.statusCode);
    stream.respond(this.pending, { endStream });
    return true;
  }
}

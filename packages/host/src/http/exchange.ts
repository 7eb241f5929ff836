import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import type { RequestPath } from './request-path.js';

// One exchange (a request and its response) as every layer of the host sees it, whatever the
// protocol (docs/pipeline.md "One exchange, two protocols"). This file is the ground floor: it
// imports nothing of the host but the request path, so any folder may import it.

/** Who answered a request, as the metrics' route label says it: a bounded set (docs/operations.md). */
export interface Capability {
  /** `static`, `shared-file`, `sync`, `contract-sync`, `operations`, a module id, `edge`, `not-found`. */
  readonly route: string;
  /** For the original's API request figures: the route mount (`/wwwroot/api/sync`), never a raw path. */
  readonly apiPath?: string;
}

/** Per-request facts worked out once by the edge phase. */
export interface RequestContext {
  /** Request id (from a trusted `X-Request-ID` or generated). */
  id: string;
  /** Client address after the forwarded-headers rule (only trusted proxies may change it). */
  clientIp: string;
  /** Scheme as the client sees it (after trusted `X-Forwarded-Proto`). */
  protocol: 'http' | 'https';
  /** Path part of the URL, still percent-encoded, without the query string. */
  rawPath: string;
  /** The path decoded once, segment by segment (see docs/pipeline.md). */
  path: RequestPath;
  /** Query string without the leading `?` (empty when none). */
  rawQuery: string;
  /** Time the request arrived (for access logs). */
  startedAt: bigint;
  /**
   * The capability that answered, as the metrics' route label names it (docs/operations.md):
   * set by the pipeline as a request enters a module's handler or route; the edge's when unset.
   */
  answeredBy?: Capability;
  /**
   * The request's trace (docs/operations.md "Traces"): the caller's, from a valid `traceparent`,
   * or a new one when traces are exported; undefined otherwise.
   */
  trace?: TraceIds;
}

/** A place in a W3C trace: the trace id and the span outgoing calls name as their parent. */
export interface TraceIds {
  /** 32 lowercase hex digits. */
  readonly traceId: string;
  /** 16 lowercase hex digits. */
  readonly spanId: string;
}

/** Node's request as the raw phases (public, static) see it: `ack` is filled by the edge phase. */
export interface AckRequest extends IncomingMessage {
  ack: RequestContext;
}

// The request type Express routes (host and modules) see: the same `ack` the raw phases read.
// Declared once here so that no handler casts to reach it; any package that imports a type from
// `@ack/host` gets it. (The signed-in user, `ackUser`, is declared beside the module contract.)
declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** Per-request facts from the edge phase (client address, scheme, raw and decoded path, id). */
      ack: RequestContext;
    }
  }
}

export type Next = (err?: unknown) => void;

/**
 * The request as the raw phases (edge, public, static) see it, whatever the protocol: Node's
 * HTTP/1.1 `IncomingMessage` (an `AckRequest`) is one, and so is an HTTP/2 stream answered on the
 * stream API (docs/pipeline.md "One exchange, two protocols"). Only what the raw phases read.
 */
export interface RawRequest {
  readonly method?: string;
  url?: string;
  readonly headers: IncomingHttpHeaders;
  readonly rawHeaders: string[];
  readonly httpVersion: string;
  readonly socket: { readonly remoteAddress?: string; readonly encrypted?: boolean };
  ack: RequestContext;
}

/**
 * The response the raw phases write, whatever the protocol: Node's `ServerResponse` (HTTP/1.1, and
 * HTTP/2's compatibility response) is one, and so is the HTTP/2 stream response of
 * `pipeline/http2-stream.ts`. Headers are set, then written once with the status; the body follows
 * with `write` (respecting back-pressure: `drain`) and `end`.
 */
export interface RawResponse {
  statusCode: number;
  readonly headersSent: boolean;
  readonly writableEnded: boolean;
  readonly destroyed: boolean;
  getHeader(name: string): number | string | string[] | undefined;
  getHeaderNames(): string[];
  setHeader(name: string, value: number | string | readonly string[]): unknown;
  removeHeader(name: string): void;
  writeHead(statusCode: number, headers?: OutgoingHttpHeaders | string[]): unknown;
  write(chunk: Uint8Array | string, callback?: (error?: Error | null) => void): boolean;
  end(chunk?: Uint8Array | string): unknown;
  destroy(error?: Error): unknown;
  once(event: 'finish' | 'close' | 'drain', listener: () => void): unknown;
  on(event: 'close', listener: () => void): unknown;
  off(event: 'finish' | 'close' | 'drain', listener: () => void): unknown;
}

/**
 * A handler on the raw request and response (no Express): used by the phases that must stay
 * lean (public and static), which are the bulk of a screen host's traffic. The same handler
 * answers HTTP/1.1 and HTTP/2 (docs/pipeline.md). Call `next()` to pass the request on, `next(err)`
 * to answer with the host's error handler.
 */
export type RawHandler = (req: RawRequest, res: RawResponse, next: Next) => void | Promise<void>;

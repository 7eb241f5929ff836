import { AsyncLocalStorage } from 'node:async_hooks';
import type { HostTraces } from '../modules/contract.js';
import type { RawRequest, RawResponse, TraceIds } from '../http/exchange.js';
import type { Logger } from '../logging/logger.js';
import { formatTraceparent, parseTraceparent, parseTracestate } from './trace-context.js';
import { createSpanExport, OTEL_PACKAGES, type HostSpan, type SpanExport } from './otlp-export.js';
import { tracesWanted } from './traces-wanted.js';

// Traces (docs/operations.md "Traces"): a request that brings a valid W3C `traceparent` keeps its
// trace for the calls the host makes while answering it; with the OTEL_* variables asking for
// export, every request gets a server span (a child of the caller's, or a new trace) from the edge
// on, and every outgoing call a client span.

/** A request's trace, kept in its async context and on `req.ack.trace`. */
export interface RequestTrace extends TraceIds {
  /** The caller's `sampled` flag, or the server span's. */
  readonly sampled: boolean;
  /** The caller's `tracestate`, passed on as it came (when valid). */
  readonly tracestate: string | undefined;
  /** The server span, when spans are exported. */
  readonly span: HostSpan | undefined;
}

export interface Tracing {
  /** Whether spans are exported. */
  readonly exporting: boolean;
  /**
   * The request's trace, begun at the edge (and its server span, which ends when the response
   * closes); undefined when nothing is exported and no valid `traceparent` came, which costs one
   * header lookup.
   */
  start(req: RawRequest, res: RawResponse): RequestTrace | undefined;
  /** The async context that carries the request's trace to the calls made while answering it. */
  readonly context: AsyncLocalStorage<RequestTrace>;
  /** What modules receive as `ctx.host.traces`. */
  readonly traces: HostTraces;
  /** Exports the spans still held. */
  close(): Promise<void>;
}

/**
 * Reads the OTEL_* variables from the process environment (the SDK reads the rest of its settings
 * there too) and loads the SDK when they ask for traces.
 */
export function createTracing(logger: Logger, serviceVersion: string, env: NodeJS.ProcessEnv = process.env): Tracing {
  const wanted = tracesWanted(env);
  for (const note of wanted.notes) logger.warn(`traces: ${note}`);
  let spans: SpanExport | undefined;
  if (wanted.on) {
    try {
      spans = createSpanExport(serviceVersion, logger);
      logger.info(`traces: spans exported over OTLP/HTTP (JSON) to ${wanted.endpoint}`);
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      if (e.code !== 'MODULE_NOT_FOUND') throw err;
      logger.warn(
        `traces: the OTEL_* variables ask for traces, but the OpenTelemetry packages are not installed; no spans are exported (npm install ${OTEL_PACKAGES.join(' ')})`,
      );
    }
  }
  const context = new AsyncLocalStorage<RequestTrace>();

  const start = (req: RawRequest, res: RawResponse): RequestTrace | undefined => {
    const header = req.headers.traceparent;
    if (spans === undefined) {
      // Nothing exported: the host passes the caller's trace on unchanged, as a hop that records nothing.
      if (header === undefined) return undefined;
      const parent = parseTraceparent(header);
      if (parent === undefined) return undefined;
      const trace: RequestTrace = {
        traceId: parent.traceId,
        spanId: parent.parentId,
        sampled: parent.sampled,
        tracestate: parseTracestate(req.headers.tracestate),
        span: undefined,
      };
      req.ack.trace = trace;
      return trace;
    }
    const parent = header === undefined ? undefined : parseTraceparent(header);
    const tracestate = parent === undefined ? undefined : parseTracestate(req.headers.tracestate);
    const span = spans.startServer(req.method ?? 'GET', parent, tracestate, {
      'http.request.method': req.method,
      'url.scheme': req.ack.protocol,
      // The path without its query string, which may carry keys (as in access lines).
      'url.path': req.ack.rawPath,
      'client.address': req.ack.clientIp,
      'network.protocol.version': req.httpVersion === '2.0' ? '2' : req.httpVersion,
      'user_agent.original': req.headers['user-agent'],
      'ack.request_id': req.ack.id,
    });
    const trace: RequestTrace = { traceId: span.traceId, spanId: span.spanId, sampled: span.sampled, tracestate, span };
    req.ack.trace = trace;
    res.once('close', () => {
      span.setAttribute('http.response.status_code', res.statusCode);
      span.end(!res.writableEnded ? 'response cut off' : res.statusCode >= 500 ? `HTTP ${res.statusCode}` : undefined);
    });
    return trace;
  };

  const traces: HostTraces = {
    current() {
      const trace = context.getStore();
      return trace && { traceId: trace.traceId, spanId: trace.spanId };
    },
    async fetch(input, init = {}) {
      const trace = context.getStore();
      if (trace === undefined) return fetch(input, init);
      const url = typeof input === 'string' ? new URL(input) : input;
      const method = (init.method ?? 'GET').toUpperCase();
      const client =
        spans && trace.span
          ? spans.startClient(method, trace.span, {
              'http.request.method': method,
              'server.address': url.hostname,
              'server.port': Number(url.port) || (url.protocol === 'https:' ? 443 : 80),
              // Without credentials and query string.
              'url.full': `${url.origin}${url.pathname}`,
            })
          : undefined;
      const headers = new Headers(init.headers);
      headers.set(
        'traceparent',
        formatTraceparent(trace.traceId, client?.spanId ?? trace.spanId, client?.sampled ?? trace.sampled),
      );
      if (trace.tracestate !== undefined) headers.set('tracestate', trace.tracestate);
      let response: Response;
      try {
        response = await fetch(input, { ...init, headers });
      } catch (err) {
        client?.setAttribute('error.type', (err as Error).name);
        client?.end((err as Error).message);
        throw err;
      }
      client?.setAttribute('http.response.status_code', response.status);
      client?.end(response.status >= 400 ? `HTTP ${response.status}` : undefined);
      return response;
    },
  };

  return {
    exporting: spans !== undefined,
    start,
    context,
    traces,
    close: async () => spans?.close(),
  };
}

import { createRequire } from 'node:module';
import type * as Api from '@opentelemetry/api';
import type * as SdkTraceBase from '@opentelemetry/sdk-trace-base';
import type * as Resources from '@opentelemetry/resources';
import type * as OtlpHttp from '@opentelemetry/exporter-trace-otlp-http';
import type { Logger } from '../logging/logger.js';
import type { TraceParent } from './trace-context.js';

// Span export over OTLP/HTTP with the OpenTelemetry SDK (docs/operations.md "Traces"). The SDK is
// an optional dependency of @ack/host, loaded here only when the OTEL_* variables turn traces on:
// a host without traces never loads it. The SDK reads its own variables (endpoint, headers,
// time-outs, batching, sampler, resource) from the process environment.

const requireCjs = createRequire(import.meta.url);

export const OTEL_PACKAGES = [
  '@opentelemetry/api',
  '@opentelemetry/sdk-trace-base',
  '@opentelemetry/resources',
  '@opentelemetry/exporter-trace-otlp-http',
] as const;

/** One span as the host uses it: its ids, and its end. */
export interface HostSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly sampled: boolean;
  setAttribute(name: string, value: string | number): void;
  /** Ends the span; `failed` marks it an error (a 5xx, a call that failed, a response cut off). */
  end(failed?: string): void;
}

export type SpanAttributes = Record<string, string | number | undefined>;

export interface SpanExport {
  /** A server span, child of the caller's span when a valid `traceparent` came, else a new trace. */
  startServer(
    name: string,
    parent: TraceParent | undefined,
    tracestate: string | undefined,
    attributes: SpanAttributes,
  ): HostSpan;
  /** A client span, child of the request's server span. */
  startClient(name: string, parent: HostSpan, attributes: SpanAttributes): HostSpan;
  /** Exports what is held and stops. */
  close(): Promise<void>;
}

/** Loads the SDK and makes the exporter; throws when a package is missing (the caller says which). */
export function createSpanExport(serviceVersion: string, logger: Logger): SpanExport {
  const api = requireCjs('@opentelemetry/api') as typeof Api;
  const sdk = requireCjs('@opentelemetry/sdk-trace-base') as typeof SdkTraceBase;
  const resources = requireCjs('@opentelemetry/resources') as typeof Resources;
  const otlp = requireCjs('@opentelemetry/exporter-trace-otlp-http') as typeof OtlpHttp;

  // Export failures (collector down, refused) reach the host's log as warnings, not silence; the
  // SDK hands an error over as its JSON, of which the message says enough.
  const warn = (message: string) => logger.warn(`traces: ${readableDiag(message)}`);
  api.diag.setLogger(
    { error: warn, warn, info: () => {}, debug: () => {}, verbose: () => {} },
    { logLevel: api.DiagLogLevel.WARN, suppressOverrideMessage: true },
  );
  const resource = resources
    .defaultResource()
    .merge(resources.resourceFromAttributes({ 'service.name': 'ack', 'service.version': serviceVersion }))
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const provider = new sdk.BasicTracerProvider({
    resource,
    spanProcessors: [new sdk.BatchSpanProcessor(new otlp.OTLPTraceExporter())],
  });
  const tracer = provider.getTracer('@ack/host', serviceVersion);

  // The SDK's span behind each host span, for its children.
  const sdkSpans = new WeakMap<HostSpan, Api.Span>();
  const wrap = (span: Api.Span): HostSpan => {
    const context = span.spanContext();
    const hostSpan: HostSpan = {
      traceId: context.traceId,
      spanId: context.spanId,
      sampled: (context.traceFlags & api.TraceFlags.SAMPLED) === api.TraceFlags.SAMPLED,
      setAttribute: (name, value) => void span.setAttribute(name, value),
      end(failed) {
        if (failed !== undefined) span.setStatus({ code: api.SpanStatusCode.ERROR, message: failed });
        span.end();
      },
    };
    sdkSpans.set(hostSpan, span);
    return hostSpan;
  };
  const defined = (attributes: SpanAttributes): Api.Attributes => {
    const out: Api.Attributes = {};
    for (const [k, v] of Object.entries(attributes)) if (v !== undefined) out[k] = v;
    return out;
  };

  return {
    startServer(name, parent, tracestate, attributes) {
      const context = parent
        ? api.trace.setSpanContext(api.ROOT_CONTEXT, {
            traceId: parent.traceId,
            spanId: parent.parentId,
            traceFlags: parent.sampled ? api.TraceFlags.SAMPLED : api.TraceFlags.NONE,
            isRemote: true,
            traceState: tracestate === undefined ? undefined : api.createTraceState(tracestate),
          })
        : api.ROOT_CONTEXT;
      return wrap(tracer.startSpan(name, { kind: api.SpanKind.SERVER, attributes: defined(attributes) }, context));
    },
    startClient(name, parent, attributes) {
      const parentSpan = sdkSpans.get(parent);
      const context = parentSpan ? api.trace.setSpan(api.ROOT_CONTEXT, parentSpan) : api.ROOT_CONTEXT;
      return wrap(tracer.startSpan(name, { kind: api.SpanKind.CLIENT, attributes: defined(attributes) }, context));
    },
    async close() {
      await provider.shutdown().catch((err: unknown) => logger.warn(`traces: export at stop failed: ${String(err)}`));
    },
  };
}

/** An SDK diagnostic as one readable line: the `message` of an error given as JSON, else as it is. */
export function readableDiag(text: string): string {
  if (!text.startsWith('{')) return text;
  try {
    const parsed = JSON.parse(text) as { message?: unknown };
    return typeof parsed.message === 'string' ? `export failed: ${parsed.message}` : text;
  } catch {
    return text;
  }
}

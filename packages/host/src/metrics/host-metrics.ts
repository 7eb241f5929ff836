import type { Server as NetServer, Socket } from 'node:net';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { EDGE } from './capability.js';
import type { StoreCallOutcome } from '../session/store-base.js';
import { problemCodeOf } from '../http/problem.js';
import { histogramFamily, valueFamily, type HistogramCell, type ValueCell } from './cells.js';
import type { HostCounters } from '../modules/contract.js';
import type { Capability, RawRequest, RawResponse } from '../http/exchange.js';

/**
 * The host's Prometheus metrics (docs/operations.md "Metrics"): the OpenTelemetry HTTP server
 * names in Prometheus form, the original host's `handstack_*` names where Node has the same
 * quantity, and Node's process metrics. One registry per host. The per-request work is a few
 * increments on children resolved once and kept (no label string is built per request).
 */
export interface HostMetrics {
  readonly registry: Registry;
  /** Counts one request from the edge to its end (`close`, whether it finished or was cut). */
  track(req: RawRequest, res: RawResponse): void;
  /** Counts the connections, TLS handshakes and upgrades of one listener. */
  observeServer(server: NetServer): void;
  /** This process's figures in the Prometheus text format. */
  render(): Promise<string>;
  /** Counters for the host's capabilities and modules. */
  readonly counters: HostCounters;
  /** The calls of the shared session store `store` (its kind), by outcome. */
  sessionStoreCalls(store: string): (seconds: number, outcome: StoreCallOutcome) => void;
}

/** Counters that count nothing, for a host with metrics off. */
export const NO_COUNTERS: HostCounters = {
  counter: () => ({ child: () => ({ inc: () => {} }) }),
};

/** The methods OpenTelemetry names; any other is `_OTHER`, so a client cannot grow the label set. */
const KNOWN_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'CONNECT', 'TRACE'];

/** OpenTelemetry's advised boundaries for `http.server.request.duration`. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

/** One cell of children per (route, method, status), made at the first request that needs it. */
interface Cell {
  duration: HistogramCell;
  api?: { count: ValueCell; sum: ValueCell; max: ValueCell };
}

export function createHostMetrics(options: { defaultMetrics?: boolean } = {}): HostMetrics {
  const registry = new Registry();
  if (options.defaultMetrics !== false) {
    collectDefaultMetrics({ register: registry });
    // Gauges named like counters (promtool refuses them); `nodejs_active_handles` and the others,
    // by type, hold the same figures.
    for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'])
      registry.removeSingleMetric(name);
  }
  const counter = (name: string, help: string) => valueFamily(registry, 'counter', name, help);
  const gauge = (name: string, help: string) => valueFamily(registry, 'gauge', name, help);
  const one = (family: ReturnType<typeof counter>) => family.child();

  const duration = histogramFamily(
    registry,
    'http_server_request_duration_seconds',
    'Duration of HTTP server requests, from the edge to the end of the response.',
    DURATION_BUCKETS,
  );
  const active = one(gauge('http_server_active_requests', 'HTTP server requests in flight.'));
  const bytesIn = one(
    counter('http_server_request_body_bytes_total', 'Request body bytes, as Content-Length declares them.'),
  );
  const bytesOut = one(
    counter(
      'http_server_response_bytes_total',
      'Bytes written on the server sockets (heads and bodies), counted as each connection closes.',
    ),
  );
  const openConnections = one(gauge('http_server_open_connections', 'Open TCP connections.'));
  const connectionsTotal = one(counter('http_server_connections_total', 'TCP connections accepted.'));
  const upgraded = one(gauge('http_server_upgraded_connections', 'Connections upgraded (WebSocket) and still open.'));
  const tlsHandshakes = one(counter('tls_server_handshakes_total', 'TLS handshakes that completed.'));
  const tlsFailures = one(
    counter('tls_server_handshake_failures_total', 'TLS connections that failed before or during the handshake.'),
  );
  const http2Streams = one(counter('http_server_http2_streams_total', 'HTTP/2 streams opened.'));
  const problems = counter('ack_problem_responses_total', 'problem+json answers, by code (docs/errors.md).');

  // The original host's names (docs/operations.md "The original's names").
  const hsRequests = one(counter('handstack_requests_total', 'Requests received.'));
  const hsCurrent = one(gauge('handstack_current_requests', 'Requests in flight.'));
  const hsFailed = one(counter('handstack_failed_requests_total', 'Requests answered 5xx or cut before their end.'));
  const hsConnections = one(gauge('handstack_current_connections', 'Open connections.'));
  const hsTls = one(counter('handstack_tls_handshakes_total', 'TLS handshakes.'));
  const hsUpgraded = one(counter('handstack_upgraded_requests_total', 'Requests upgraded (WebSocket).'));
  const hsApiCount = counter('handstack_api_requests_total', 'API requests, by route mount and status.');
  const hsApiSum = counter(
    'handstack_api_request_duration_seconds_total',
    'Seconds spent answering API requests, by route mount and status.',
  );
  const hsApiMax = valueFamily(
    registry,
    'gauge',
    'handstack_api_request_duration_seconds_max',
    'Longest API request since the process started, by route mount and status.',
    'max',
  );
  one(
    valueFamily(
      registry,
      'gauge',
      'handstack_process_start_time_seconds',
      'Start time of the oldest process serving, in seconds since the Unix epoch.',
      'min',
    ),
  ).value = Math.round(Date.now() / 1000 - process.uptime());
  const workingSet = valueFamily(
    registry,
    'gauge',
    'handstack_process_working_set_bytes',
    'Resident set size of the processes.',
    'sum',
    () => (workingSetBytes.value = process.memoryUsage.rss()),
  );
  const workingSetBytes = workingSet.child();

  const methodIndex = new Map(KNOWN_METHODS.map((m, i) => [m, i]));
  const methodNames = [...KNOWN_METHODS, '_OTHER'];
  // Node hands the method as an interned string: GET is one comparison, the others one lookup.
  const methodOf = (method: string | undefined) =>
    method === 'GET' ? 0 : (methodIndex.get(method ?? '') ?? KNOWN_METHODS.length);
  // Per capability, its cells by one number: method index × 1000 + status (statuses are < 1000).
  const cells = new Map<Capability, Map<number, Cell>>();
  const cellFor = (capability: Capability, method: number, status: number): Cell => {
    let byKey = cells.get(capability);
    if (!byKey) cells.set(capability, (byKey = new Map<number, Cell>()));
    const key = method * 1000 + status;
    let cell = byKey.get(key);
    if (!cell) {
      const code = String(status);
      cell = {
        duration: duration.child({
          http_request_method: methodNames[method]!,
          http_response_status_code: code,
          http_route: capability.route,
        }),
      };
      if (capability.apiPath !== undefined) {
        const api = { path: capability.apiPath, status: code };
        cell.api = { count: hsApiCount.child(api), sum: hsApiSum.child(api), max: hsApiMax.child(api) };
      }
      byKey.set(key, cell);
    }
    return cell;
  };
  const problemChildren = new Map<string, ValueCell>();
  const problem = (code: string) => {
    let child = problemChildren.get(code);
    if (!child) problemChildren.set(code, (child = problems.child({ code })));
    child.value++;
  };

  const families = new Map<string, ReturnType<typeof counter>>();
  const counters: HostCounters = {
    counter(name, help) {
      let family = families.get(name);
      if (!family) families.set(name, (family = counter(name, help)));
      const made = family;
      return {
        child(labels) {
          const cell = made.child(labels);
          return { inc: (by = 1) => void (cell.value += by) };
        },
      };
    },
  };

  const storeCalls = histogramFamily(
    registry,
    'ack_session_store_call_duration_seconds',
    'Calls to the shared session store, by store and outcome (ok, failed, timeout).',
    DURATION_BUCKETS,
  );

  return {
    registry,
    counters,
    sessionStoreCalls(store) {
      const children = {
        ok: storeCalls.child({ store, outcome: 'ok' }),
        failed: storeCalls.child({ store, outcome: 'failed' }),
        timeout: storeCalls.child({ store, outcome: 'timeout' }),
      };
      return (seconds, outcome) => children[outcome].observe(seconds);
    },
    track(req, res) {
      active.value++;
      hsCurrent.value++;
      hsRequests.value++;
      const length = req.headers['content-length'];
      if (length !== undefined) {
        const n = Number(length);
        if (n > 0) bytesIn.value += n;
      }
      // `on`, not `once`: the response closes once, and `once` would bind a wrapper per request.
      res.on('close', () => {
        active.value--;
        hsCurrent.value--;
        const seconds = Number(process.hrtime.bigint() - req.ack.startedAt) / 1e9;
        // A response cut before its end is 499, as nginx logs a client that left.
        const status = res.writableEnded ? res.statusCode : 499;
        if (status >= 400) {
          if (status >= 499) hsFailed.value++;
          const code = problemCodeOf(res);
          if (code !== undefined) problem(code);
        }
        const cell = cellFor(req.ack.answeredBy ?? EDGE, methodOf(req.method), status);
        cell.duration.observe(seconds);
        if (cell.api) {
          cell.api.count.value++;
          cell.api.sum.value += seconds;
          if (seconds > cell.api.max.value) cell.api.max.value = seconds;
        }
      });
    },
    observeServer(server) {
      server.on('connection', (socket: Socket) => {
        connectionsTotal.value++;
        openConnections.value++;
        hsConnections.value++;
        socket.once('close', () => {
          openConnections.value--;
          hsConnections.value--;
          bytesOut.value += socket.bytesWritten;
        });
      });
      server.on('secureConnection', () => {
        tlsHandshakes.value++;
        hsTls.value++;
      });
      server.on('tlsClientError', () => tlsFailures.value++);
      // Only where upgrades are taken: an `upgrade` listener makes Node hand every upgrade over.
      if (server.listenerCount('upgrade') > 0)
        server.on('upgrade', (_req: unknown, socket: Socket) => {
          hsUpgraded.value++;
          upgraded.value++;
          socket.once('close', () => upgraded.value--);
        });
      server.on('stream', () => http2Streams.value++);
    },
    render: () => registry.metrics(),
  };
}

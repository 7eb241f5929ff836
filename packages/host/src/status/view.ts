/**
 * The status page's pure core (docs/operations.md "Status page"): from the figures each process
 * puts on `/metrics` (prom-client's JSON form of the very same registry), the view the page draws.
 * Rates and latency quantiles are over the window between two samples; quantiles are read from the
 * histogram's buckets as Prometheus' `histogram_quantile` reads them.
 */

/** One metric as prom-client's `getMetricsAsJSON()` gives it. */
export interface MetricJSON {
  name: string;
  type?: unknown;
  values: { labels: Partial<Record<string, string | number>>; value: number; metricName?: string }[];
}

/** One sync push, as the process that answered it remembers it. */
export interface SyncPush {
  /** A fingerprint of the token (`sha256:` and 12 hex digits), never the token. */
  who: string;
  /** The kind (upload, batch) and the method. */
  what: string;
  /** Request body bytes, as declared. */
  bytes: number;
  /** When the answer ended, ISO 8601. */
  when: string;
  status: number;
  outcome: 'ok' | 'refused' | 'failed';
}

/** What one process answers when the status is asked for. */
export interface ProcessSample {
  /** The cluster worker id; null for a host without `--workers`. */
  worker: number | null;
  pid: number;
  /** Milliseconds since the epoch when the figures were read. */
  at: number;
  metrics: MetricJSON[];
  readiness: { ready: boolean; failed: string[] };
  sessionStore: { shared: boolean; up: boolean };
  pushes: SyncPush[];
}

/** The counts the view needs, read out of one process's metrics. */
export interface Figures {
  requests: number;
  errors: number;
  /** Upper bounds of the latency buckets (seconds), finite ones only. */
  bounds: number[];
  /** Cumulative counts per bound, then `+Inf` last (one more than `bounds`). */
  cumulative: number[];
  openConnections: number;
  upgradedConnections: number;
  activeRequests: number;
  storeCalls: { ok: number; failed: number; timeout: number };
}

const DURATION = 'http_server_request_duration_seconds';

/** Reads the figures the page shows out of one process's metrics. Unknown names are ignored. */
export function readFigures(metrics: readonly MetricJSON[]): Figures {
  const f: Figures = {
    requests: 0,
    errors: 0,
    bounds: [],
    cumulative: [],
    openConnections: 0,
    upgradedConnections: 0,
    activeRequests: 0,
    storeCalls: { ok: 0, failed: 0, timeout: 0 },
  };
  const buckets = new Map<number, number>();
  const single = (m: MetricJSON) => m.values.reduce((s, v) => s + finite(v.value), 0);
  for (const m of metrics) {
    if (m.name === DURATION) {
      for (const v of m.values) {
        const value = finite(v.value);
        if (v.metricName === `${DURATION}_count`) {
          f.requests += value;
          const status = Number(v.labels.http_response_status_code);
          // As /metrics' handstack_failed_requests_total: 5xx, and 499 for a response cut short.
          if (status >= 500 || status === 499) f.errors += value;
        } else if (v.metricName === `${DURATION}_bucket`) {
          const le = v.labels.le === '+Inf' ? Infinity : Number(v.labels.le);
          if (!Number.isNaN(le)) buckets.set(le, (buckets.get(le) ?? 0) + value);
        }
      }
    } else if (m.name === 'http_server_open_connections') f.openConnections = single(m);
    else if (m.name === 'http_server_upgraded_connections') f.upgradedConnections = single(m);
    else if (m.name === 'http_server_active_requests') f.activeRequests = single(m);
    else if (m.name === 'ack_session_store_call_duration_seconds') {
      for (const v of m.values) {
        const outcome = v.labels.outcome;
        if (v.metricName?.endsWith('_count') && (outcome === 'ok' || outcome === 'failed' || outcome === 'timeout'))
          f.storeCalls[outcome] += finite(v.value);
      }
    }
  }
  const les = [...buckets.keys()].sort((a, b) => a - b);
  f.bounds = les.filter((le) => le !== Infinity);
  f.cumulative = [...f.bounds.map((le) => buckets.get(le)!), buckets.get(Infinity) ?? f.requests];
  return f;
}

const finite = (n: number) => (Number.isFinite(n) && n > 0 ? n : 0);

/** A counter's growth between two samples; a counter that went back was reset (a worker restarted). */
export const growth = (before: number, after: number) => (after >= before ? after - before : after);

/**
 * The `q` quantile (0..1) of the observations a cumulative histogram holds, interpolated linearly
 * inside its bucket as `histogram_quantile` does; in the `+Inf` bucket, the highest finite bound.
 * Null when the histogram is empty.
 */
export function quantile(q: number, bounds: readonly number[], cumulative: readonly number[]): number | null {
  const total = cumulative[cumulative.length - 1] ?? 0;
  if (!(total > 0)) return null;
  const rank = Math.min(Math.max(q, 0), 1) * total;
  for (let i = 0; i < bounds.length; i++) {
    if (cumulative[i]! >= rank) {
      const lower = i === 0 ? 0 : bounds[i - 1]!;
      const below = i === 0 ? 0 : cumulative[i - 1]!;
      const inBucket = cumulative[i]! - below;
      if (inBucket <= 0) return lower;
      return lower + ((bounds[i]! - lower) * (rank - below)) / inBucket;
    }
  }
  return bounds.length > 0 ? bounds[bounds.length - 1]! : null;
}

/** Bucket growth between two readings of the same bounds; any change of bounds starts afresh. */
function bucketGrowth(before: Figures | undefined, after: Figures): number[] {
  const same =
    before !== undefined &&
    before.bounds.length === after.bounds.length &&
    before.bounds.every((b, i) => b === after.bounds[i]);
  if (!same) return after.cumulative;
  // A reset shows as the total going back: then the whole reading is the growth.
  const total = after.cumulative.length - 1;
  if ((after.cumulative[total] ?? 0) < (before.cumulative[total] ?? 0)) return after.cumulative;
  return after.cumulative.map((c, i) => Math.max(0, c - (before.cumulative[i] ?? 0)));
}

export interface Rates {
  /** Requests per second over the window; null without an earlier sample. */
  requestsPerSecond: number | null;
  /** Errors (5xx and cut responses) per request over the window; null when there were none. */
  errorRate: number | null;
  /** Latency quantiles over the window, in seconds; null when no request ended in it. */
  p50: number | null;
  p95: number | null;
}

export interface WorkerView extends Rates {
  worker: number | null;
  pid: number;
  openConnections: number;
  upgradedConnections: number;
  activeRequests: number;
  ready: boolean;
  failed: string[];
  sessionStore: { shared: boolean; up: boolean; calls: { ok: number; failed: number; timeout: number } };
}

export interface StatusView {
  at: string;
  windowSeconds: number | null;
  total: Rates & { openConnections: number; upgradedConnections: number; activeRequests: number; ready: boolean };
  workers: WorkerView[];
  /** The latest sync pushes of every process, newest first. */
  pushes: SyncPush[];
}

interface Window {
  seconds: number | null;
  requests: number;
  errors: number;
  buckets: number[];
  bounds: number[];
}

function windowOf(before: ProcessSample | undefined, after: ProcessSample, a: Figures): Window {
  // A sample of another process (a restarted worker has a new pid) is no baseline.
  const base = before && before.pid === after.pid ? readFigures(before.metrics) : undefined;
  const seconds = before && base ? (after.at - before.at) / 1000 : null;
  return {
    seconds: seconds !== null && seconds > 0 ? seconds : null,
    requests: base ? growth(base.requests, a.requests) : a.requests,
    errors: base ? growth(base.errors, a.errors) : a.errors,
    buckets: bucketGrowth(base, a),
    bounds: a.bounds,
  };
}

function rates(w: Window): Rates {
  return {
    requestsPerSecond: w.seconds === null ? null : w.requests / w.seconds,
    errorRate: w.requests > 0 ? Math.min(1, w.errors / w.requests) : null,
    p50: quantile(0.5, w.bounds, w.buckets),
    p95: quantile(0.95, w.bounds, w.buckets),
  };
}

const keyOf = (s: ProcessSample) => `${s.worker ?? 'solo'}:${s.pid}`;

/** The view between an earlier sampling of the host (`before`, may be empty) and the latest. */
export function statusView(
  before: readonly ProcessSample[],
  after: readonly ProcessSample[],
  maxPushes = 20,
): StatusView {
  const earlier = new Map(before.map((s) => [keyOf(s), s]));
  const workers: WorkerView[] = [];
  const windows: Window[] = [];
  for (const s of [...after].sort((x, y) => (x.worker ?? 0) - (y.worker ?? 0))) {
    const f = readFigures(s.metrics);
    const base = earlier.get(keyOf(s));
    const w = windowOf(base, s, f);
    const calls = base ? readFigures(base.metrics).storeCalls : { ok: 0, failed: 0, timeout: 0 };
    windows.push(w);
    workers.push({
      worker: s.worker,
      pid: s.pid,
      ...rates(w),
      openConnections: f.openConnections,
      upgradedConnections: f.upgradedConnections,
      activeRequests: f.activeRequests,
      ready: s.readiness.ready,
      failed: [...s.readiness.failed],
      sessionStore: {
        ...s.sessionStore,
        calls: {
          ok: growth(calls.ok, f.storeCalls.ok),
          failed: growth(calls.failed, f.storeCalls.failed),
          timeout: growth(calls.timeout, f.storeCalls.timeout),
        },
      },
    });
  }
  // The whole host: sums of the windows; a worker without a baseline adds no rate.
  const timed = windows.filter((w) => w.seconds !== null);
  const bounds = windows[0]?.bounds ?? [];
  const sameBounds = windows.every(
    (w) => w.bounds.length === bounds.length && w.bounds.every((b, i) => b === bounds[i]),
  );
  const buckets = bounds.map(() => 0).concat(0);
  if (sameBounds) for (const w of windows) w.buckets.forEach((c, i) => (buckets[i]! += c));
  const requests = windows.reduce((s, w) => s + w.requests, 0);
  const errors = windows.reduce((s, w) => s + w.errors, 0);
  const total: StatusView['total'] = {
    requestsPerSecond: timed.length === 0 ? null : timed.reduce((s, w) => s + w.requests / w.seconds!, 0),
    errorRate: requests > 0 ? Math.min(1, errors / requests) : null,
    p50: sameBounds ? quantile(0.5, bounds, buckets) : null,
    p95: sameBounds ? quantile(0.95, bounds, buckets) : null,
    openConnections: workers.reduce((s, w) => s + w.openConnections, 0),
    upgradedConnections: workers.reduce((s, w) => s + w.upgradedConnections, 0),
    activeRequests: workers.reduce((s, w) => s + w.activeRequests, 0),
    ready: workers.length > 0 && workers.every((w) => w.ready),
  };
  const pushes = after
    .flatMap((s) => s.pushes)
    .sort((x, y) => (x.when < y.when ? 1 : x.when > y.when ? -1 : 0))
    .slice(0, maxPushes);
  const latest = Math.max(0, ...after.map((s) => s.at));
  return {
    at: new Date(latest).toISOString(),
    windowSeconds: timed.length === 0 ? null : Math.max(...timed.map((w) => w.seconds!)),
    total,
    workers,
    pushes,
  };
}

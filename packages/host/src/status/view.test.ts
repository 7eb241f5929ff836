import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fuzzOptions } from '../test-support/index.js';
import { createHostMetrics } from '../metrics/host-metrics.js';
import { growth, quantile, readFigures, statusView, type MetricJSON, type ProcessSample } from './view.js';

// The status page's core (docs/operations.md "Status page"): its numbers are read from the same
// registry /metrics renders, and rates and quantiles follow Prometheus' own reading of them.

const BOUNDS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

/** A real host registry with `durations` observed as requests answered `status`. */
async function registryFigures(requests: { seconds: number; status: number }[]): Promise<MetricJSON[]> {
  const metrics = createHostMetrics({ defaultMetrics: false });
  // The host's own histogram, observed as track() would for each request.
  for (const r of requests) observe(metrics, r.seconds, r.status);
  return metrics.registry.getMetricsAsJSON();
}

/** Drives the real `track()` with a request that ends after `seconds` with `status`. */
function observe(metrics: ReturnType<typeof createHostMetrics>, seconds: number, status: number) {
  const listeners: (() => void)[] = [];
  const req = {
    headers: {},
    method: 'GET',
    ack: { startedAt: process.hrtime.bigint() - BigInt(Math.round(seconds * 1e9)), answeredBy: { route: 'static' } },
  };
  const res = {
    statusCode: status,
    writableEnded: true,
    getHeader: () => undefined,
    once: (_: string, f: () => void) => listeners.push(f),
    on: (_: string, f: () => void) => listeners.push(f),
  };
  metrics.track(req as never, res as never);
  for (const f of listeners) f();
}

const sample = (at: number, metrics: MetricJSON[], extra: Partial<ProcessSample> = {}): ProcessSample => ({
  worker: 1,
  pid: 100,
  at,
  metrics,
  readiness: { ready: true, failed: [] },
  sessionStore: { shared: false, up: true },
  pushes: [],
  ...extra,
});

describe('readFigures', () => {
  it('reads requests, errors (5xx and cut) and buckets from the host registry', async () => {
    const figures = readFigures(
      await registryFigures([
        { seconds: 0.003, status: 200 },
        { seconds: 0.02, status: 404 },
        { seconds: 0.3, status: 500 },
        { seconds: 20, status: 200 },
      ]),
    );
    expect(figures.requests).toBe(4);
    expect(figures.errors).toBe(1);
    expect(figures.bounds).toEqual(BOUNDS);
    expect(figures.cumulative[0]).toBe(1);
    expect(figures.cumulative.at(-1)).toBe(4);
    expect(figures.cumulative.at(-2)).toBe(3);
  });
});

describe('quantile', () => {
  it('interpolates inside the bucket as histogram_quantile does', () => {
    // 10 observations in (0, 1], 10 in (1, 2]: the median is 1, p75 is 1.5.
    expect(quantile(0.5, [1, 2], [10, 20, 20])).toBe(1);
    expect(quantile(0.75, [1, 2], [10, 20, 20])).toBe(1.5);
    expect(quantile(0.95, [1, 2], [0, 0, 5])).toBe(2);
    expect(quantile(0.5, [1, 2], [0, 0, 0])).toBeNull();
  });

  it('stays within the bounds and grows with q (property)', () => {
    const histogram = fc
      .array(fc.nat({ max: 1000 }), { minLength: BOUNDS.length + 1, maxLength: BOUNDS.length + 1 })
      .map((counts) => counts.map((_, i) => counts.slice(0, i + 1).reduce((a, b) => a + b, 0)));
    fc.assert(
      fc.property(
        histogram,
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (cum, a, b) => {
          const [lo, hi] = a <= b ? [a, b] : [b, a];
          const qlo = quantile(lo, BOUNDS, cum);
          const qhi = quantile(hi, BOUNDS, cum);
          if (cum.at(-1) === 0) return qlo === null && qhi === null;
          expect(qlo).not.toBeNull();
          expect(qlo!).toBeGreaterThanOrEqual(0);
          expect(qhi!).toBeLessThanOrEqual(BOUNDS.at(-1)!);
          expect(qlo!).toBeLessThanOrEqual(qhi! + 1e-12);
          return true;
        },
      ),
      fuzzOptions(),
    );
  });
});

describe('statusView', () => {
  it('gives requests/s, error rate and quantiles over the window between two samplings', async () => {
    const first = await registryFigures([{ seconds: 0.001, status: 200 }]);
    const later = await registryFigures([
      { seconds: 0.001, status: 200 },
      ...Array.from({ length: 19 }, () => ({ seconds: 0.06, status: 200 })),
      { seconds: 0.06, status: 503 },
    ]);
    const view = statusView([sample(1_000, first)], [sample(3_000, later)]);
    expect(view.windowSeconds).toBe(2);
    expect(view.total.requestsPerSecond).toBe(10);
    expect(view.total.errorRate).toBe(0.05);
    expect(view.total.p50).toBeGreaterThan(0.05);
    expect(view.total.p50).toBeLessThanOrEqual(0.075);
    expect(view.workers).toHaveLength(1);
  });

  it('a first sampling has no rate; a worker restarted (new pid, counters back to 0) is not a negative rate', async () => {
    const busy = await registryFigures(Array.from({ length: 50 }, () => ({ seconds: 0.01, status: 200 })));
    const fresh = await registryFigures([{ seconds: 0.01, status: 200 }]);
    expect(statusView([], [sample(0, busy)]).total.requestsPerSecond).toBeNull();
    const restarted = statusView([sample(0, busy)], [sample(1_000, fresh, { pid: 101 })]);
    expect(restarted.total.requestsPerSecond).toBeNull();
    const reset = statusView([sample(0, busy)], [sample(1_000, fresh)]);
    expect(reset.total.requestsPerSecond).toBe(1);
  });

  it('sums workers and orders the pushes newest first', async () => {
    const a = await registryFigures([{ seconds: 0.01, status: 200 }]);
    const push = (when: string) => ({
      who: 'sha256:0123456789ab',
      what: 'POST upload',
      bytes: 1,
      when,
      status: 200,
      outcome: 'ok' as const,
    });
    const view = statusView(
      [sample(0, [], { worker: 1 }), sample(0, [], { worker: 2, pid: 200 })],
      [
        sample(1_000, a, { worker: 2, pid: 200, pushes: [push('2026-01-01T00:00:01.000Z')] }),
        sample(1_000, a, {
          worker: 1,
          readiness: { ready: false, failed: ['sessionStore'] },
          pushes: [push('2026-01-01T00:00:02.000Z')],
        }),
      ],
    );
    expect(view.workers.map((w) => w.worker)).toEqual([1, 2]);
    expect(view.total.requestsPerSecond).toBe(2);
    expect(view.total.ready).toBe(false);
    expect(view.pushes.map((p) => p.when)).toEqual(['2026-01-01T00:00:02.000Z', '2026-01-01T00:00:01.000Z']);
  });

  it('never gives a negative or non-finite rate, whatever two samplings hold (property)', () => {
    const metricsArb = fc
      .record({ count: fc.nat(), errors: fc.nat(), buckets: fc.array(fc.nat(), { minLength: 3, maxLength: 3 }) })
      .map(({ count, errors, buckets }): MetricJSON[] => [
        {
          name: 'http_server_request_duration_seconds',
          values: [
            {
              labels: { http_response_status_code: 200 },
              value: count,
              metricName: 'http_server_request_duration_seconds_count',
            },
            {
              labels: { http_response_status_code: 500 },
              value: errors,
              metricName: 'http_server_request_duration_seconds_count',
            },
            ...[0.1, 1, '+Inf'].map((le, i) => ({
              labels: { le },
              value: buckets.slice(0, i + 1).reduce((x, y) => x + y, 0),
              metricName: 'http_server_request_duration_seconds_bucket',
            })),
          ],
        },
      ]);
    fc.assert(
      fc.property(metricsArb, metricsArb, fc.nat({ max: 60_000 }), fc.boolean(), (m1, m2, dt, samePid) => {
        const v = statusView([sample(0, m1)], [sample(dt, m2, { pid: samePid ? 100 : 7 })]);
        for (const r of [v.total, ...v.workers]) {
          if (r.requestsPerSecond !== null)
            expect(Number.isFinite(r.requestsPerSecond) && r.requestsPerSecond >= 0).toBe(true);
          if (r.errorRate !== null) expect(r.errorRate >= 0 && r.errorRate <= 1).toBe(true);
          if (r.p50 !== null && r.p95 !== null) expect(r.p50).toBeLessThanOrEqual(r.p95 + 1e-12);
        }
        expect(growth(5, 3)).toBe(3);
      }),
      fuzzOptions(),
    );
  });
});

import cluster from 'node:cluster';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { RequestHandler } from 'express';
import type { Registry } from 'prom-client';
import type { ModuleRoutes, RawHandler } from '../modules/contract.js';
import type { HealthState } from '../health/health-state.js';
import { FIGURES_UNAVAILABLE, type operationsGuard } from '../metrics/operations.js';
import { sendProblem } from '../http/problem.js';
import { createPushLog } from './pushes.js';
import { statusView, type ProcessSample } from './view.js';
import { workerStatusSource } from './cluster.js';

export { createStatusGatherer } from './cluster.js';

/**
 * The status page (docs/operations.md "Status page"): a page and its two assets, answered to anyone
 * (they hold no figure), and `status.json`, the figures, behind the operations credential. The
 * figures are the registry `/metrics` renders, read per process (every worker under `--workers`).
 */
export interface StatusPageOptions {
  path: string;
  registry: Registry;
  health: HealthState;
  sessionStore: { shared: boolean };
  /** The operations credential's guard (metrics/operations.ts). */
  guarded: ReturnType<typeof operationsGuard>;
  /** Whether this process is a cluster worker: then every worker is asked through the primary. */
  inWorker: boolean;
}

export interface StatusPage {
  /** Edge handler noting the sync pushes; runs for every request, costs one check unless it is a POST or PUT. */
  edge: RawHandler;
  routes: ModuleRoutes[];
}

const NO_STORE = { 'Cache-Control': 'no-store, no-cache, max-age=0', Pragma: 'no-cache' };
/** Rates are over the polls of the last this many milliseconds. */
const WINDOW_MS = 10_000;

// Shipped as they are in the package's `src` (plain files, no build step), read once at start.
const ASSETS = new URL('../../src/status/assets/', import.meta.url);
const asset = (name: string) => fs.readFileSync(fileURLToPath(new URL(name, ASSETS)), 'utf8');

const escapeAttribute = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

export function createStatusPage(options: StatusPageOptions): StatusPage {
  const pushes = createPushLog();
  const base = options.path.replace(/\/+$/, '') + '/';
  const files: Record<string, { type: string; body: string }> = {
    '/': { type: 'text/html; charset=utf-8', body: asset('index.html').replaceAll('{{base}}', escapeAttribute(base)) },
    '/status.js': { type: 'text/javascript; charset=utf-8', body: asset('status.js') },
    '/status.css': { type: 'text/css; charset=utf-8', body: asset('status.css') },
  };

  const sampleSelf = async (): Promise<ProcessSample> => {
    const readiness = options.health.peekReadiness();
    return {
      worker: cluster.isWorker ? (cluster.worker?.id ?? null) : null,
      pid: process.pid,
      at: Date.now(),
      metrics: await options.registry.getMetricsAsJSON(),
      readiness,
      sessionStore: { shared: options.sessionStore.shared, up: !readiness.failed.includes('sessionStore') },
      pushes: pushes.recent(),
    };
  };
  const sampleAll = options.inWorker ? workerStatusSource(sampleSelf) : async () => [await sampleSelf()];

  // Earlier samplings of the whole host, the oldest kept one being the window's start.
  const history: { at: number; samples: ProcessSample[] }[] = [];
  const figures = options.guarded(async (req, res) => {
    let samples: ProcessSample[];
    try {
      samples = await sampleAll();
    } catch {
      return sendProblem(res, FIGURES_UNAVAILABLE, req.method);
    }
    const now = Date.now();
    while (history.length > 0 && now - history[0]!.at > WINDOW_MS) history.shift();
    const view = statusView(history[0]?.samples ?? [], samples);
    history.push({ at: now, samples });
    res
      .status(200)
      .type('application/json; charset=utf-8')
      .send(req.method === 'HEAD' ? undefined : JSON.stringify(view));
  });

  const handler: RequestHandler = (req, res, next) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    if (req.path === '/status.json') return figures(req, res, next);
    const file = files[req.path];
    if (!file) return next();
    res
      .status(200)
      .set(NO_STORE)
      .type(file.type)
      .send(req.method === 'HEAD' ? undefined : file.body);
  };
  return { edge: pushes.handler, routes: [{ mount: options.path, capability: 'operations', handler }] };
}

import cluster from 'node:cluster';
import os from 'node:os';
import type { Request, Response } from 'express';
import type { HostServices, ModuleRoutes } from '../modules/contract.js';
import type { HostSettings } from '../settings/schema.js';
import type { Logger } from '../logging/logger.js';
import { sendProblem, type Problem } from '../http/problem.js';
import { hostProblems } from '../http/problem-codes.js';
import { checkHostAccessID } from '../guards/host-access.js';

/** The 503 when the figures of every worker could not be gathered in time (`/metrics`, the status page). */
export const FIGURES_UNAVAILABLE: Problem = {
  status: 503,
  code: hostProblems.OPERATIONS_METRICS_UNAVAILABLE.code,
  detail: 'The figures of every worker could not be gathered in time.',
  headers: { 'Retry-After': '1' },
};

/**
 * The original host's operations endpoints (docs/operations.md "Operations endpoints"):
 * `GET /checkip` (no credential: the client address as the host computed it), and, behind the
 * `hostAccessID` credential, `GET /diagnostics` (JSON figures) and `GET /metrics` (Prometheus
 * text). Paths match whatever their case, as in the original.
 */
export interface OperationsOptions {
  settings: HostSettings;
  services: Pick<HostServices, 'accessChecks'>;
  logger: Logger;
  version: string;
  /** The Prometheus text: this process's, or the whole host's under `--workers`. */
  metrics?: () => Promise<string>;
  /** The modules loaded, for `/diagnostics`. */
  modules: () => readonly { id: string }[];
}

const NO_STORE = { 'Cache-Control': 'no-store, no-cache, max-age=0', Pragma: 'no-cache' };
const PROMETHEUS_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
const ACCESS_PROBLEMS = {
  missing: hostProblems.OPERATIONS_MISSING_HOST_ACCESS_ID,
  invalid: hostProblems.OPERATIONS_INVALID_HOST_ACCESS_ID,
  not_configured: hostProblems.OPERATIONS_NOT_CONFIGURED,
};

/**
 * The credential: the `hostAccessID` header (the original's), or `Authorization: Bearer <id>`,
 * which a stock Prometheus `authorization` block sends. Never the query string
 * (docs/compatibility.md). A header given beside the other wins over it.
 */
export function presentedHostAccessID(headers: Request['headers']): string | undefined {
  const header = headers.hostaccessid;
  if (header !== undefined) return Array.isArray(header) ? header[0] : header;
  const authorization = headers.authorization;
  if (authorization === undefined) return undefined;
  const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
  return m ? m[1] : '';
}

/**
 * Wraps a handler of an operations endpoint: answered `no-store`, and only with the credential
 * (`presentedHostAccessID`), else a 401 problem. The status page shares it (docs/operations.md).
 */
export function operationsGuard(
  settings: HostSettings,
  services: Pick<HostServices, 'accessChecks'>,
  logger: Logger,
): (
  handler: (req: Request, res: Response) => void | Promise<void>,
) => (req: Request, res: Response, next: (err?: unknown) => void) => void {
  const app = settings.AppSettings;
  const checkAccess = services.accessChecks.guard((req) => {
    const verdict = checkHostAccessID(app.HostAccessID, presentedHostAccessID(req.headers));
    if (verdict === 'ok') return undefined;
    const detail = {
      missing: 'The hostAccessID header (or Authorization: Bearer) is required.',
      invalid: 'The hostAccessID credential is not valid.',
      not_configured: 'No AppSettings:HostAccessID of its own is configured (empty or the shipped placeholder).',
    }[verdict];
    if (verdict === 'not_configured')
      logger.warn(`${req.ack.rawPath} refused (not_configured) from ${req.ack.clientIp}`);
    return {
      counts: verdict === 'invalid',
      what: 'operations invalid hostAccessID',
      problem: {
        status: 401,
        code: ACCESS_PROBLEMS[verdict].code,
        detail,
        headers: { ...NO_STORE, 'WWW-Authenticate': 'Bearer' },
      },
    };
  });
  return (handler) => (req, res, next) => {
    res.set(NO_STORE);
    checkAccess(req, res, (err?: unknown) =>
      err === undefined ? void Promise.resolve(handler(req, res)).catch(next) : next(err),
    );
  };
}

export function createOperationsRoutes(options: OperationsOptions): ModuleRoutes[] {
  const { settings, services, logger } = options;
  type Next = (err?: unknown) => void;
  const exact = (handler: (req: Request, res: Response, next: Next) => void | Promise<void>) => {
    return (req: Request, res: Response, next: Next) => {
      // Mounted at the path itself: only the path (with or without a final `/`) and GET or HEAD.
      if (req.path !== '/' || (req.method !== 'GET' && req.method !== 'HEAD')) return next();
      void Promise.resolve(handler(req, res, next)).catch(next);
    };
  };
  const guarded = operationsGuard(settings, services, logger);

  const routes: ModuleRoutes[] = [
    {
      mount: '/checkip',
      capability: 'operations',
      handler: exact((req, res) => {
        // The address as the host worked it out (trusted forwarded headers applied), as text/html.
        res
          .status(200)
          .type('text/html; charset=utf-8')
          .send(req.method === 'HEAD' ? undefined : req.ack.clientIp);
      }),
    },
    {
      mount: '/diagnostics',
      capability: 'operations',
      handler: exact(
        guarded((req, res) => {
          const body = JSON.stringify(diagnostics(options));
          res
            .status(200)
            .type('application/json; charset=utf-8')
            .send(req.method === 'HEAD' ? undefined : body);
        }),
      ),
    },
  ];
  const source = options.metrics;
  if (source) {
    routes.push({
      mount: '/metrics',
      capability: 'operations',
      handler: exact(
        guarded(async (req, res) => {
          let text: string;
          try {
            text = await source();
          } catch (err) {
            logger.warn(`/metrics: ${(err as Error).message}`);
            return sendProblem(res, FIGURES_UNAVAILABLE, req.method);
          }
          res
            .status(200)
            .set('Content-Type', PROMETHEUS_TYPE)
            .send(req.method === 'HEAD' ? undefined : text);
        }),
      ),
    });
  }
  return routes;
}

/**
 * `/diagnostics`: the original's groups (environment, process, runtime, hosting, server), camelCase,
 * with figures only: no settings value, no secret, no path of the host's files.
 */
export function diagnostics(options: Pick<OperationsOptions, 'settings' | 'version' | 'modules'>) {
  const app = options.settings.AppSettings;
  const memory = process.memoryUsage();
  const cpu = process.cpuUsage();
  return {
    environment: {
      machineName: os.hostname(),
      osPlatform: process.platform,
      osVersion: os.release(),
      osArchitecture: process.arch,
      processorCount: os.availableParallelism(),
      runningEnvironment: app.RunningEnvironment,
    },
    process: {
      processId: process.pid,
      startTime: new Date(Date.now() - process.uptime() * 1000).toISOString(),
      uptimeSeconds: Math.round(process.uptime()),
      workingSetBytes: memory.rss,
      heapUsedBytes: memory.heapUsed,
      heapTotalBytes: memory.heapTotal,
      externalBytes: memory.external,
      userProcessorSeconds: cpu.user / 1e6,
      systemProcessorSeconds: cpu.system / 1e6,
      activeHandles: process.getActiveResourcesInfo().length,
    },
    runtime: {
      name: 'node',
      version: process.version,
      v8Version: process.versions.v8,
      uvVersion: process.versions.uv,
      opensslVersion: process.versions.openssl,
    },
    hosting: {
      hostVersion: options.version,
      applicationId: app.ApplicationID,
      modules: options.modules().map((m) => m.id),
      // Node removes NODE_UNIQUE_ID from a worker's environment once the worker is set up.
      workerId: cluster.worker?.id ?? null,
    },
    server: {
      systemMemoryBytes: os.totalmem(),
      freeMemoryBytes: os.freemem(),
      loadAverage: os.loadavg(),
      systemUptimeSeconds: Math.round(os.uptime()),
      time: new Date().toISOString(),
    },
  };
}

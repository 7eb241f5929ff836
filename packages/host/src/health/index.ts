import type { RawHandler } from '../http/exchange.js';
import type { HealthSettings } from '../settings/schema.js';
import type { SharedSessionStore } from '../session/store-base.js';
import type { Logger } from '../logging/logger.js';
import { createHealthState, type HealthAnswer, type HealthState } from './health-state.js';
import { monitorEventLoop } from './event-loop.js';

export { createHealthState, type HealthState } from './health-state.js';

/** What the host holds for its liveness and readiness URLs (docs/operations.md "Health"). */
export interface Health {
  state: HealthState;
  /** The edge handler answering the two URLs; first in the edge, before anything a balancer must not need. */
  handler: RawHandler;
  /** How long a stop waits, readiness failing, before it drains (0 when no balancer asked). */
  stopDelayMs(): number;
  close(): void;
}

function answer(res: Parameters<RawHandler>[1], method: string | undefined, { status, body }: HealthAnswer): void {
  const text = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.setHeader('Cache-Control', 'no-store');
  // A balancer asks again when told; the value is the store probe's interval, rounded up.
  if (status === 503) res.setHeader('Retry-After', '1');
  res.end(method === 'HEAD' ? undefined : text);
}

/**
 * The health URLs of one process, answered at the edge (no session, no sign-in, no credential)
 * for GET and HEAD on exactly the configured path; anything else goes on down the pipeline. The
 * session store, when shared, is probed on a timer, never per request.
 */
export function createHealth(
  settings: HealthSettings,
  sessionStore: SharedSessionStore | undefined,
  logger: Logger,
): Health {
  const state = createHealthState();
  const loop = monitorEventLoop();
  const { LivenessPath, ReadinessPath, EventLoopDelayLimitMs } = settings;
  let probe: NodeJS.Timeout | undefined;
  if (sessionStore) {
    let running = false;
    probe = setInterval(() => {
      if (running) return;
      running = true;
      void sessionStore.probe().then((up) => {
        running = false;
        state.setSessionStore(up);
      });
    }, settings.StoreProbeIntervalSeconds * 1000);
    probe.unref();
  }
  const handler: RawHandler = (req, res, next) => {
    const path = req.ack.rawPath;
    const live = path === LivenessPath;
    if (!live && path !== ReadinessPath) return next();
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    answer(res, req.method, live ? state.liveness(loop.delayMs(), EventLoopDelayLimitMs) : state.readiness());
  };
  logger.debug(`health: liveness ${LivenessPath}, readiness ${ReadinessPath}`);
  return {
    state,
    handler,
    stopDelayMs: () => (state.readinessAsked ? settings.StopDelaySeconds * 1000 : 0),
    close() {
      if (probe) clearInterval(probe);
      loop.close();
    },
  };
}

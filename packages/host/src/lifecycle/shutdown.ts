import type { InvalidationBus } from '../cluster/invalidation.js';
import type { UploadFlow } from '../uploads/upload-flow.js';
import type { Logger } from '../logging/logger.js';
import type { LoadedModule } from '../modules/load-modules.js';
import type { HostFailureThrottle } from '../guards/failure-throttle.js';
import type { SessionState } from '../session/create-session.js';
import type { Upgrades } from '../websocket/index.js';
import type { Tracing } from '../tracing/index.js';
import type { Listeners } from './listeners.js';
import type { Health } from '../health/index.js';

/** What a running host holds open, each closed in the order `stopHost` gives. */
export interface RunningParts {
  listeners: Pick<Listeners, 'drain' | 'close'>;
  upgrades: Pick<Upgrades, 'closeAll'>;
  uploadFlows: readonly UploadFlow[];
  modules: readonly LoadedModule[];
  accessChecks: HostFailureThrottle;
  bus: InvalidationBus;
  sessionState: SessionState | undefined;
  health: Pick<Health, 'state' | 'stopDelayMs' | 'close'>;
  tracing: Pick<Tracing, 'close'>;
  logging: { close(): Promise<void> };
  logger: Logger;
}

export interface StopOptions {
  /** How long requests in flight may take before their connections are cut. */
  graceMs: number;
  /** First answer requests with `Connection: close` for up to that long (rolling restart). */
  drainMs: number;
}

/**
 * The stop order (docs/api.md `host.close`): clients are told to leave, then nothing new gets in
 * and what is in flight finishes, and only then goes what the requests used (modules, the bus,
 * the session store), the log last so that every step can still log.
 */
export async function stopHost(parts: RunningParts, { graceMs, drainMs }: StopOptions): Promise<void> {
  const { logger } = parts;
  // Readiness fails first, and a balancer that probes it gets the time to see that and send new
  // requests elsewhere, while this host still answers them (docs/operations.md "Health").
  parts.health.state.markStopping();
  const delayMs = parts.health.stopDelayMs();
  // Meanwhile kept-alive connections are closed after their next answer (`Connection: close`), so
  // that the listener's close later finds none a balancer could send a request on as it goes.
  if (delayMs > 0)
    await Promise.all([new Promise((resolve) => setTimeout(resolve, delayMs)), parts.listeners.drain(delayMs)]);
  // A worker retired in a rolling restart first tells its clients to go elsewhere (docs/scale-out.md).
  if (drainMs > 0) await parts.listeners.drain(drainMs);
  // Uploads in flight are refused (503) and their staged files removed before anything else.
  await Promise.all(parts.uploadFlows.map((flow) => flow.close()));
  // Then sockets: an open WebSocket would hold its listener open for the whole grace time.
  await parts.upgrades.closeAll(Math.min(graceMs, 2_000));
  await parts.listeners.close(graceMs);
  for (const m of [...parts.modules].reverse()) {
    try {
      await m.contributions.close?.();
    } catch (err) {
      logger.error(`module ${m.id} failed to close`, err as Error);
    }
  }
  parts.accessChecks.close();
  parts.health.close();
  parts.bus.close();
  await parts.sessionState
    ?.close()
    .catch((err: unknown) => logger.error('session store failed to close', err as Error));
  // The spans of the last requests, before the log that reports a failed export.
  await parts.tracing.close();
  await parts.logging.close();
}

/**
 * A start-up that fails once the session store is open (a module, an endpoint setting) must not
 * leave its connections, or the bus's listener, open.
 */
export async function abandonStart(
  parts: Pick<RunningParts, 'bus' | 'sessionState' | 'accessChecks' | 'health' | 'tracing'>,
  err: unknown,
): Promise<never> {
  parts.accessChecks.close();
  parts.health.close();
  await parts.tracing.close();
  parts.bus.close();
  await parts.sessionState?.close().catch(() => {});
  throw err;
}

// The health of one host process (docs/operations.md "Health"): what its liveness and readiness URLs
// answer. A small state that the host's steps update (started, stopping, the session store's
// probe) and the edge reads; no I/O here.

/** A readiness check that can fail, named in the answer's body. */
export type ReadinessCheck = 'starting' | 'stopping' | 'sessionStore' | 'modules';

export interface HealthAnswer {
  status: 200 | 503;
  body: Record<string, unknown>;
}

export interface HealthState {
  /** Every listener is open: the host takes traffic. */
  markStarted(): void;
  /** A stop began: readiness fails from now on, before any connection is drained. */
  markStopping(): void;
  /** The session store's last probe (a shared store only). */
  setSessionStore(up: boolean): void;
  /** Modules that `AppSettings:LoadModules` names whose folder is there but which could not be loaded. */
  setFailedModules(ids: readonly string[]): void;
  /** Whether the readiness URL has been asked since start: only then does a stop wait for a balancer to notice. */
  readonly readinessAsked: boolean;
  liveness(eventLoopDelayMs: number, limitMs: number): HealthAnswer;
  readiness(): HealthAnswer;
  /** The readiness checks as they stand, for the status page: unlike `readiness()`, not a balancer asking. */
  peekReadiness(): { ready: boolean; failed: ReadinessCheck[] };
}

export function createHealthState(): HealthState {
  let started = false;
  let stopping = false;
  let storeUp = true;
  let failedModules: readonly string[] = [];
  let asked = false;
  return {
    markStarted: () => void (started = true),
    markStopping: () => void (stopping = true),
    setSessionStore: (up) => void (storeUp = up),
    setFailedModules: (ids) => void (failedModules = [...ids]),
    get readinessAsked() {
      return asked;
    },
    liveness(delayMs, limitMs) {
      // A loop that was held past the limit (a synchronous loop, a huge JSON parse) is not live:
      // a supervisor restarts it rather than wait.
      if (delayMs > limitMs) return { status: 503, body: { status: 'unhealthy', failed: ['eventLoop'] } };
      return { status: 200, body: { status: 'ok' } };
    },
    peekReadiness() {
      const failed: ReadinessCheck[] = [];
      if (!started) failed.push('starting');
      if (stopping) failed.push('stopping');
      if (!storeUp) failed.push('sessionStore');
      if (failedModules.length > 0) failed.push('modules');
      return { ready: failed.length === 0, failed };
    },
    readiness() {
      asked = true;
      const { failed } = this.peekReadiness();
      if (failed.length === 0) return { status: 200, body: { status: 'ready' } };
      const body: Record<string, unknown> = { status: 'not ready', failed };
      // Module ids are settings the operator wrote, never a path or a secret.
      if (failedModules.length > 0) body.modules = failedModules;
      return { status: 503, body };
    },
  };
}

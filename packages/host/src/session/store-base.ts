import session from 'express-session';
import type express from 'express';
import { ProblemError } from '../http/problem.js';
import { hostProblems } from '../http/problem-codes.js';
import { redactSecretsInText } from '../settings/redact.js';
import type { Logger } from '../logging/logger.js';

/** A store call that got no answer in time: the database may hold it forever (a black hole). */
export class StoreTimeoutError extends Error {
  constructor(timeoutMs: number) {
    super(`did not answer within ${timeoutMs / 1000} s`);
    this.name = 'StoreTimeoutError';
  }
}

export type StoreCallOutcome = 'ok' | 'failed' | 'timeout';

/** Failure lines of one store, at most one per this interval however many requests fail. */
const FAILURE_LOG_INTERVAL_MS = 60_000;

/**
 * What every shared session store has in common (docs/sessions.md): every call has a deadline
 * (`StoreTimeoutSeconds`), so a database that stops answering without closing its connections
 * cannot hold requests; a failure of the database is a 503 problem for the request that needed the
 * session, logged once per outage (redacted; at most once a minute however many requests fail),
 * and the next successful call closes the outage, so sessions come back without a restart.
 */
export abstract class SharedSessionStore extends session.Store {
  private down = false;
  /** When the last failure line was written (0: never), and the failures since it. */
  private lastFailureLog = 0;
  private failuresSinceLog = 0;
  /** Whether this outage was logged: its end is logged only then. */
  private outageLogged = false;
  /** Bumped on each abandon(), so that several calls timing out together abandon once. */
  private generation = 0;
  /**
   * The sessions express-session built from what this store read (it builds them through
   * `createSession`): saved back only while they are still there, never created again.
   */
  private readonly loaded = new WeakSet<object>();

  protected constructor(
    /** `MySql`, `SqlServer`, `PostgreSql` or `Redis`: named in every message. */
    readonly kind: string,
    /** Where the store is (`host:port`), for messages: never credentials. */
    readonly where: string,
    protected readonly idleMs: number,
    protected readonly logger: Logger,
    /** Deadline of every call (`StoreTimeoutSeconds`). */
    protected readonly timeoutMs: number = 5_000,
  ) {
    super();
  }

  /** Checks the database once: connects and, for SQL, creates the schema and table when missing. */
  protected abstract prepare(): Promise<void>;
  protected abstract read(sid: string, now: number): Promise<string | undefined>;
  /**
   * Writes the entry; with `onlyIfPresent`, only over one that is there and not expired (in one
   * statement, so that a destroy cannot fall between a check and the write).
   */
  protected abstract write(sid: string, json: string, expires: number, onlyIfPresent: boolean): Promise<void>;
  protected abstract extend(sid: string, expires: number): Promise<void>;
  protected abstract remove(sid: string): Promise<void>;
  /** Deletes expired sessions; SQL stores only (Redis expires keys itself). */
  abstract cleanup(now: number): Promise<number>;
  abstract shutdown(): Promise<void>;
  /**
   * A call got no answer before its deadline: the connection it went out on may never answer, or
   * answer late and out of step, so a store drops such connections here (default: nothing to do).
   */
  protected abandon(): void {}

  /**
   * `op` within `ms`, or a `StoreTimeoutError`; a late outcome of `op` is dropped. One promise and
   * one timer per call: every signed-in request makes two calls (read, then touch or save).
   */
  private withDeadline<T>(op: () => Promise<T>, ms: number): Promise<T> {
    const generation = this.generation;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        if (generation === this.generation) {
          this.generation++;
          this.abandon();
        }
        reject(new StoreTimeoutError(ms));
      }, ms);
      let attempt: Promise<T>;
      try {
        attempt = op();
      } catch (err) {
        clearTimeout(timer);
        return reject(err as Error);
      }
      attempt.then(
        (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        (err: unknown) => {
          clearTimeout(timer);
          reject(err as Error);
        },
      );
    });
  }

  /** Start-up: waits up to `waitMs` for the database, then fails with a message naming the store. */
  async waitUntilReady(waitMs: number): Promise<void> {
    const deadline = Date.now() + waitMs;
    let last: unknown;
    // A store that is down, or does not answer within a second, is said at once, with how long the
    // start waits for it: else the start is silent for the whole wait (docs/sessions.md).
    let said = false;
    const sayWaiting = (reason?: unknown) => {
      if (said) return;
      said = true;
      this.logger.warn(
        `waiting for the session store ${this.kind} at ${this.where}, up to ${Math.round(waitMs / 1000)} s (AppSettings:SessionState:StoreStartupWaitSeconds)${reason === undefined ? '' : `: ${describeError(reason)}`}`,
      );
    };
    const slow = setTimeout(() => sayWaiting(), Math.min(1_000, waitMs));
    slow.unref();
    try {
      for (;;) {
        try {
          await this.withDeadline(() => this.prepare(), Math.max(this.timeoutMs, deadline - Date.now()));
          return;
        } catch (err) {
          last = err;
        }
        if (Date.now() >= deadline) break;
        sayWaiting(last);
        await new Promise((r) => setTimeout(r, Math.min(500, Math.max(0, deadline - Date.now()))));
      }
    } finally {
      clearTimeout(slow);
    }
    throw new Error(
      `session store ${this.kind} at ${this.where} is not reachable after ${Math.round(waitMs / 1000)} s: ${describeError(last)}`,
    );
  }

  /** One cheap call that shows the database answers (default: `prepare`, which only checks once prepared). */
  protected ping(): Promise<void> {
    return this.prepare();
  }

  /**
   * Readiness (docs/operations.md "Health"): whether the store answers one cheap call within its
   * deadline. Counts as any call does, so an outage is logged once and its end too.
   */
  async probe(): Promise<boolean> {
    try {
      await this.guard(() => this.ping());
      return true;
    } catch {
      return false;
    }
  }

  /** Hears every call's duration and outcome: the host's metrics (docs/operations.md). */
  observeCall: ((seconds: number, outcome: StoreCallOutcome) => void) | undefined;

  private guard<T>(op: () => Promise<T>): Promise<T> {
    const started = performance.now();
    return this.withDeadline(op, this.timeoutMs).then(
      (value) => {
        this.observeCall?.((performance.now() - started) / 1000, 'ok');
        if (this.down) this.recovered();
        return value;
      },
      (err: unknown) => {
        this.observeCall?.(
          (performance.now() - started) / 1000,
          err instanceof StoreTimeoutError ? 'timeout' : 'failed',
        );
        this.noteFailure(err);
        throw new ProblemError({
          status: 503,
          code: hostProblems.SESSION_STORE_UNAVAILABLE.code,
          detail: `The session store (${this.kind}) is not available; try again shortly.`,
          headers: { 'Retry-After': '5' },
        });
      },
    );
  }

  private recovered(): void {
    this.down = false;
    if (this.outageLogged) {
      this.outageLogged = false;
      this.logger.info(`session store ${this.kind} at ${this.where} is available again`);
    }
  }

  /**
   * One line when an outage starts, then at most one a minute while it lasts (with the count of
   * failed calls), so that a flood of requests, or a store that keeps coming and going, cannot
   * flood the log.
   */
  private noteFailure(err: unknown): void {
    const now = Date.now();
    const starting = !this.down;
    this.down = true;
    this.failuresSinceLog++;
    if (now - this.lastFailureLog < FAILURE_LOG_INTERVAL_MS) return;
    const more = this.failuresSinceLog > 1 ? ` (${this.failuresSinceLog} calls failed since the last report)` : '';
    this.logger.error(
      `session store ${this.kind} at ${this.where} ${starting ? 'failed' : 'is still failing'}: ${describeError(err)}${more}`,
    );
    this.lastFailureLog = now;
    this.failuresSinceLog = 0;
    this.outageLogged = true;
  }

  override get(sid: string, callback: (err: unknown, session?: session.SessionData | null) => void): void {
    this.guard(() => this.read(sid, Date.now())).then((json) => {
      if (json === undefined) return callback(null, null);
      let data: session.SessionData | null = null;
      try {
        data = JSON.parse(json) as session.SessionData;
      } catch {
        // A row that is not JSON is treated as no session, not as an error for the user.
      }
      callback(null, data);
    }, callback);
  }

  override createSession<Req extends express.Request>(req: Req, data: session.SessionData) {
    const built = super.createSession(req, data);
    this.loaded.add(built);
    return built;
  }

  /**
   * A session read earlier is saved only over itself: one destroyed meanwhile (sign-out, on this
   * host or another) stays destroyed, however late a request that still holds it saves it
   * (docs/sessions.md "A destroyed session stays destroyed"). A new one (first save, `regenerate`)
   * is created.
   */
  override set(sid: string, data: session.SessionData, callback?: (err?: unknown) => void): void {
    const onlyIfPresent = this.loaded.has(data);
    this.guard(() => this.write(sid, JSON.stringify(data), Date.now() + this.idleMs, onlyIfPresent)).then(
      () => callback?.(),
      (err: unknown) => callback?.(err),
    );
  }

  /**
   * A record kept until `expiresAt`, not for the idle time-out: the host's list of signed-out
   * cookies (sign-in/revocations.ts), under ids no session can have.
   */
  async setUntil(sid: string, data: object, expiresAt: number): Promise<void> {
    await this.guard(() => this.write(sid, JSON.stringify(data), expiresAt, false));
  }

  override touch(sid: string, _data: session.SessionData, callback?: (err?: unknown) => void): void {
    this.guard(() => this.extend(sid, Date.now() + this.idleMs)).then(
      () => callback?.(),
      (err: unknown) => callback?.(err),
    );
  }

  override destroy(sid: string, callback?: (err?: unknown) => void): void {
    this.guard(() => this.remove(sid)).then(
      () => callback?.(),
      (err: unknown) => callback?.(err),
    );
  }
}

/** An error as one redacted line: drivers may echo connection details. */
export function describeError(err: unknown): string {
  const e = err as { code?: string; message?: string } | undefined;
  const text = e?.message || e?.code || String(err);
  return redactSecretsInText(e?.code && !text.includes(e.code) ? `${e.code}: ${text}` : text)
    .replace(/\s+/g, ' ')
    .slice(0, 300);
}

import session from 'express-session';
import { ProblemError } from '../http/problem.js';
import { redactSecretsInText } from '../settings/redact.js';
import type { Logger } from '../logging/logger.js';

/**
 * What every shared session store has in common (docs/sessions.md): a failure of the database is a
 * 503 problem for the request that needed the session, logged once per outage (redacted), and the
 * next successful call closes the outage, so sessions come back without a restart.
 */
export abstract class SharedSessionStore extends session.Store {
  private down = false;

  protected constructor(
    /** `MySql`, `SqlServer`, `PostgreSql` or `Redis`: named in every message. */
    readonly kind: string,
    /** Where the store is (`host:port`), for messages: never credentials. */
    readonly where: string,
    protected readonly idleMs: number,
    protected readonly logger: Logger,
  ) {
    super();
  }

  /** Checks the database once: connects and, for SQL, creates the schema and table when missing. */
  protected abstract prepare(): Promise<void>;
  protected abstract read(sid: string, now: number): Promise<string | undefined>;
  protected abstract write(sid: string, json: string, expires: number): Promise<void>;
  protected abstract extend(sid: string, expires: number): Promise<void>;
  protected abstract remove(sid: string): Promise<void>;
  /** Deletes expired sessions; SQL stores only (Redis expires keys itself). */
  abstract cleanup(now: number): Promise<number>;
  abstract shutdown(): Promise<void>;

  /** Start-up: waits up to `waitMs` for the database, then fails with a message naming the store. */
  async waitUntilReady(waitMs: number): Promise<void> {
    const deadline = Date.now() + waitMs;
    let last: unknown;
    for (;;) {
      try {
        await this.prepare();
        return;
      } catch (err) {
        last = err;
      }
      if (Date.now() >= deadline) break;
      await new Promise((r) => setTimeout(r, Math.min(500, Math.max(0, deadline - Date.now()))));
    }
    throw new Error(
      `session store ${this.kind} at ${this.where} is not reachable after ${Math.round(waitMs / 1000)} s: ${describeError(last)}`,
    );
  }

  private async guard<T>(op: () => Promise<T>): Promise<T> {
    try {
      const value = await op();
      if (this.down) {
        this.down = false;
        this.logger.info(`session store ${this.kind} at ${this.where} is available again`);
      }
      return value;
    } catch (err) {
      if (!this.down) {
        this.down = true;
        this.logger.error(`session store ${this.kind} at ${this.where} failed: ${describeError(err)}`);
      }
      throw new ProblemError({
        status: 503,
        code: 'session.store_unavailable',
        detail: `The session store (${this.kind}) is not available; try again shortly.`,
        headers: { 'Retry-After': '5' },
      });
    }
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

  override set(sid: string, data: session.SessionData, callback?: (err?: unknown) => void): void {
    this.guard(() => this.write(sid, JSON.stringify(data), Date.now() + this.idleMs)).then(
      () => callback?.(),
      (err: unknown) => callback?.(err),
    );
  }

  /**
   * A record kept until `expiresAt`, not for the idle time-out: the host's list of signed-out
   * cookies (sign-in/revocations.ts), under ids no session can have.
   */
  async setUntil(sid: string, data: object, expiresAt: number): Promise<void> {
    await this.guard(() => this.write(sid, JSON.stringify(data), expiresAt));
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

import { createClient } from 'redis';
import type { Logger } from '../logging/logger.js';
import { SharedSessionStore } from './store-base.js';
import type { RedisConnection } from '../settings/connection-string.js';

/**
 * Sessions as Redis strings `prefix + sid` with a PX time-to-live: Redis itself never returns an
 * expired key and removes it. Commands fail at once while disconnected (no offline queue), so a
 * request gets its 503 instead of hanging; the client reconnects in the background. A connection
 * that stops answering without closing is replaced (docs/sessions.md "When the database is not
 * there"): replies match commands by order, so one whose commands were lost must never be reused.
 */
export class RedisSessionStore extends SharedSessionStore {
  private client;
  private connecting: Promise<unknown> | undefined;
  private lastError: unknown;
  /** Since when the client has been connecting without becoming ready (undefined: ready). */
  private notReadySince: number | undefined;
  private closed = false;

  constructor(
    private readonly c: RedisConnection,
    readonly prefix: string,
    idleMs: number,
    logger: Logger,
    timeoutMs?: number,
  ) {
    super('Redis', `${c.host}:${c.port}`, idleMs, logger, timeoutMs);
    this.client = this.newClient();
  }

  private newClient() {
    const c = this.c;
    const client = createClient({
      socket: {
        host: c.host,
        port: c.port,
        ...(c.tls ? { tls: true as const } : {}),
        connectTimeout: c.connectTimeoutMs ?? 5_000,
        reconnectStrategy: (retries: number) => Math.min(100 * 2 ** Math.min(retries, 5), 2_000),
      },
      username: c.user,
      password: c.password,
      database: c.database,
      disableOfflineQueue: true,
    });
    // Without a listener a lost connection would be an unhandled 'error' event; failures reach
    // users through the commands instead (503) and the log through the store's guard.
    client.on('error', (err: unknown) => {
      this.lastError = err;
    });
    return client;
  }

  private connect(): Promise<unknown> {
    return this.client.connect().catch((err: unknown) => {
      this.lastError = err;
    });
  }

  /** A fresh client in place of one that may never answer; the old one's pending commands fail. */
  protected override abandon(): void {
    if (this.closed) return;
    const old = this.client;
    this.client = this.newClient();
    this.notReadySince = undefined;
    this.connecting = this.connect();
    if (old.isOpen) old.destroy();
  }

  /**
   * The client for a command. One that has been connecting for longer than the deadline is
   * replaced: its handshake may have gone into a connection that never answers, and node-redis
   * would wait for it forever.
   */
  private ready() {
    if (this.client.isReady) {
      this.notReadySince = undefined;
    } else if (this.connecting) {
      const now = Date.now();
      this.notReadySince ??= now;
      if (now - this.notReadySince > this.timeoutMs) this.abandon();
    }
    return this.client;
  }

  /** The client retries in the background; until it is ready, say why it is not. */
  protected async prepare(): Promise<void> {
    this.connecting ??= this.connect();
    const client = this.ready();
    if (!client.isReady) throw this.lastError ?? new Error('not connected yet');
    await client.ping();
  }

  protected async read(sid: string): Promise<string | undefined> {
    return (await this.ready().get(this.prefix + sid)) ?? undefined;
  }

  protected async write(sid: string, json: string, expires: number, onlyIfPresent: boolean): Promise<void> {
    const px = Math.max(1, expires - Date.now());
    await this.ready().set(this.prefix + sid, json, onlyIfPresent ? { PX: px, XX: true } : { PX: px });
  }

  protected async extend(sid: string, expires: number): Promise<void> {
    await this.ready().pExpire(this.prefix + sid, Math.max(1, expires - Date.now()));
  }

  protected async remove(sid: string): Promise<void> {
    await this.ready().del(this.prefix + sid);
  }

  async cleanup(): Promise<number> {
    return 0;
  }

  async shutdown(): Promise<void> {
    this.closed = true;
    if (this.client.isOpen) this.client.destroy();
  }
}

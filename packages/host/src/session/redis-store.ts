import { createClient } from 'redis';
import type { Logger } from '../logging/logger.js';
import { SharedSessionStore } from './store-base.js';
import type { RedisConnection } from './connection-string.js';

/**
 * Sessions as Redis strings `prefix + sid` with a PX time-to-live: Redis itself never returns an
 * expired key and removes it. Commands fail at once while disconnected (no offline queue), so a
 * request gets its 503 instead of hanging; the client reconnects in the background.
 */
export class RedisSessionStore extends SharedSessionStore {
  private readonly client;
  private connecting: Promise<unknown> | undefined;
  private lastError: unknown;

  constructor(
    c: RedisConnection,
    readonly prefix: string,
    idleMs: number,
    logger: Logger,
  ) {
    super('Redis', `${c.host}:${c.port}`, idleMs, logger);
    this.client = createClient({
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
    this.client.on('error', (err: unknown) => {
      this.lastError = err;
    });
  }

  /** The client retries in the background; until it is ready, say why it is not. */
  protected async prepare(): Promise<void> {
    this.connecting ??= this.client.connect().catch((err: unknown) => {
      this.lastError = err;
    });
    if (!this.client.isReady) throw this.lastError ?? new Error('not connected yet');
    await this.client.ping();
  }

  protected async read(sid: string): Promise<string | undefined> {
    return (await this.client.get(this.prefix + sid)) ?? undefined;
  }

  protected async write(sid: string, json: string, expires: number): Promise<void> {
    await this.client.set(this.prefix + sid, json, { PX: Math.max(1, expires - Date.now()) });
  }

  protected async extend(sid: string, expires: number): Promise<void> {
    await this.client.pExpire(this.prefix + sid, Math.max(1, expires - Date.now()));
  }

  protected async remove(sid: string): Promise<void> {
    await this.client.del(this.prefix + sid);
  }

  async cleanup(): Promise<number> {
    return 0;
  }

  async shutdown(): Promise<void> {
    if (this.client.isOpen) this.client.destroy();
  }
}

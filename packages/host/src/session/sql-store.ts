import knexFactory, { type Knex } from 'knex';
import type { Logger } from '../logging/logger.js';
import { redactSecretsInText } from '../settings/redact.js';
import { SharedSessionStore } from './store-base.js';
import type { MySqlConnection, PostgreSqlConnection, SqlServerConnection } from '../settings/connection-string.js';

export type SqlDialect = 'mysql2' | 'pg' | 'mssql';

/**
 * Sessions in a SQL table `schema.table (sid, sess, expires)`, `expires` in ms since 1970 taken
 * from the host's clock. One implementation for MySQL/MariaDB, PostgreSQL and SQL Server through
 * knex (docs/sessions.md says why). Reads filter on `expires > now`, so an expired row still in the
 * table is never returned; `cleanup` deletes them.
 */
export class SqlSessionStore extends SharedSessionStore {
  readonly db: Knex;

  constructor(
    kind: string,
    where: string,
    readonly dialect: SqlDialect,
    connection: Knex.StaticConnectionConfig,
    readonly schema: string,
    readonly table: string,
    idleMs: number,
    logger: Logger,
    timeoutMs?: number,
    /** Most pooled connections (the connection string's `Maximum Pool Size`); 5 when not given. */
    poolMax = 5,
  ) {
    super(kind, where, idleMs, logger, timeoutMs);
    // Small pool, acquire time-out within the deadline: while the database is down a request waits
    // seconds for its 503, not the minute knex waits by default.
    this.db = knexFactory({
      client: dialect,
      connection,
      pool: { min: 0, max: poolMax },
      acquireConnectionTimeout: this.timeoutMs,
      log: knexLog(logger),
    });
  }

  /**
   * Every statement carries the deadline too: knex then retires the connection of a statement that
   * got no answer (it may answer late, or never), so it is not handed to the next request.
   */
  private timed<T extends { timeout(ms: number): T }>(query: T): T {
    return query.timeout(this.timeoutMs);
  }

  private rows(): Knex.QueryBuilder {
    return this.db.withSchema(this.schema).table(this.table);
  }

  /** The statements that create the schema and the table when missing (also used by the tests). */
  createStatements(): string[] {
    const createSchema =
      this.dialect === 'mysql2'
        ? this.db.raw('create database if not exists ??', [this.schema]).toString()
        : this.dialect === 'pg'
          ? this.db.raw('create schema if not exists ??', [this.schema]).toString()
          : this.db
              .raw(`if schema_id(?) is null exec('create schema ' + quotename(?))`, [this.schema, this.schema])
              .toString();
    const createTable = this.db.schema
      .withSchema(this.schema)
      .createTable(this.table, (t) => {
        t.string('sid', 128).primary();
        if (this.dialect === 'mysql2') t.text('sess', 'mediumtext').notNullable();
        else t.text('sess').notNullable();
        t.bigInteger('expires').notNullable().index(`${this.table}_expires`);
      })
      .toString();
    return [createSchema, createTable];
  }

  protected async prepare(): Promise<void> {
    const [createSchema, createTable] = this.createStatements();
    await this.timed(this.db.raw(createSchema!));
    if (await this.tableReadable()) return;
    try {
      for (const statement of createTable!.split(/;\n/)) await this.timed(this.db.raw(statement));
    } catch (err) {
      // Two hosts starting at once: the other one created it first.
      if (!(await this.tableReadable())) throw err;
    }
  }

  /** Readiness: a read of no rows, the cheapest call that needs the database and the table. */
  protected override async ping(): Promise<void> {
    await this.timed(this.rows().select('sid').whereRaw('1 = 0'));
  }

  /** Whether the table is there: a read of no rows (unlike hasTable, it can carry a deadline). */
  private async tableReadable(): Promise<boolean> {
    try {
      await this.timed(this.rows().select('sid').whereRaw('1 = 0'));
      return true;
    } catch {
      return false;
    }
  }

  readQuery(sid: string, now: number): Knex.QueryBuilder {
    return this.rows().select('sess').where('sid', sid).andWhere('expires', '>', now).first();
  }

  protected async read(sid: string, now: number): Promise<string | undefined> {
    const row = (await this.timed(this.readQuery(sid, now))) as { sess: string } | undefined;
    return row?.sess;
  }

  /**
   * Insert or replace; `onlyIfPresent`: replace a row that is there and not expired, or nothing.
   * knex has no upsert for SQL Server: update first, insert when no row was there.
   */
  protected async write(sid: string, sess: string, expires: number, onlyIfPresent: boolean): Promise<void> {
    if (onlyIfPresent) {
      await this.timed(this.updateLiveQuery(sid, sess, expires, Date.now()));
      return;
    }
    if (this.dialect !== 'mssql') {
      await this.timed(this.rows().insert({ sid, sess, expires }).onConflict('sid').merge(['sess', 'expires']));
      return;
    }
    const updated = await this.timed(this.updateQuery(sid, sess, expires));
    if (updated > 0) return;
    try {
      await this.timed(this.rows().insert({ sid, sess, expires }));
    } catch (err) {
      if ((await this.timed(this.updateQuery(sid, sess, expires))) === 0) throw err;
    }
  }

  updateQuery(sid: string, sess: string, expires: number): Knex.QueryBuilder<object, number> {
    return this.rows().where('sid', sid).update({ sess, expires });
  }

  /** Replaces a session only while it is there and not expired (docs/sessions.md "A destroyed session stays destroyed"). */
  updateLiveQuery(sid: string, sess: string, expires: number, now: number): Knex.QueryBuilder<object, number> {
    return this.rows().where('sid', sid).andWhere('expires', '>', now).update({ sess, expires });
  }

  touchQuery(sid: string, expires: number, now: number): Knex.QueryBuilder<object, number> {
    return this.rows().where('sid', sid).andWhere('expires', '>', now).update({ expires });
  }

  protected async extend(sid: string, expires: number): Promise<void> {
    await this.timed(this.touchQuery(sid, expires, Date.now()));
  }

  protected async remove(sid: string): Promise<void> {
    await this.timed(this.rows().where('sid', sid).delete());
  }

  cleanupQuery(now: number): Knex.QueryBuilder<object, number> {
    return this.rows().where('expires', '<=', now).delete();
  }

  async cleanup(now: number): Promise<number> {
    return this.timed(this.cleanupQuery(now));
  }

  async shutdown(): Promise<void> {
    await this.db.destroy();
  }
}

/**
 * knex's own messages go to the host's log (redacted), not to stdout: knex prints them with
 * console.log unless given these. "Connection Error" is knex retiring a connection that failed,
 * which the store's outage line already reports, so it is a debug line.
 */
function knexLog(logger: Logger): Knex.Config['log'] {
  const text = (message: unknown) =>
    redactSecretsInText(typeof message === 'string' ? message : String(message))
      .replace(/\s+/g, ' ')
      .slice(0, 300);
  return {
    warn: (message: unknown) => {
      const line = `knex: ${text(message)}`;
      if (/^Connection Error/.test(text(message))) logger.debug(line);
      else logger.warn(line);
    },
    error: (message: unknown) => logger.error(`knex: ${text(message)}`),
    deprecate: (method: string, alternative: string) =>
      logger.warn(`knex: ${method} is deprecated, please use ${alternative}`),
    debug: (message: unknown) => logger.debug(`knex: ${text(message)}`),
  };
}

/** host, port, credentials, database and TLS, as mysql2 and pg both name them. */
function tcpConnection(c: MySqlConnection | PostgreSqlConnection) {
  return {
    host: c.host,
    port: c.port,
    user: c.user,
    password: c.password,
    database: c.database,
    ...(c.ssl === 'none' || c.ssl === 'prefer' ? {} : { ssl: { rejectUnauthorized: c.ssl !== 'require' } }),
  };
}

export function mySqlKnexConnection(c: MySqlConnection): Knex.StaticConnectionConfig {
  return { ...tcpConnection(c), connectTimeout: (c.connectTimeoutSeconds ?? 5) * 1000 } as Knex.MySql2ConnectionConfig;
}

export function postgreSqlKnexConnection(c: PostgreSqlConnection): Knex.StaticConnectionConfig {
  return {
    ...tcpConnection(c),
    connectionTimeoutMillis: (c.connectTimeoutSeconds ?? 5) * 1000,
  } as Knex.PgConnectionConfig;
}

export function sqlServerKnexConnection(c: SqlServerConnection): Knex.StaticConnectionConfig {
  return {
    server: c.host,
    port: c.instanceName ? undefined : c.port,
    user: c.user,
    password: c.password,
    database: c.database,
    connectionTimeout: (c.connectTimeoutSeconds ?? 5) * 1000,
    options: {
      instanceName: c.instanceName,
      encrypt: c.encrypt,
      trustServerCertificate: c.trustServerCertificate,
      appName: c.applicationName,
    },
  } as Knex.MsSqlConnectionConfig;
}

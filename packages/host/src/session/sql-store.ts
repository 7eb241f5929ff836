import knexFactory, { type Knex } from 'knex';
import type { Logger } from '../logging/logger.js';
import { SharedSessionStore } from './store-base.js';
import type { MySqlConnection, PostgreSqlConnection, SqlServerConnection } from './connection-string.js';

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
  ) {
    super(kind, where, idleMs, logger);
    // Small pool, short acquire time-out: while the database is down a request waits seconds for
    // its 503, not the minute knex waits by default.
    this.db = knexFactory({ client: dialect, connection, pool: { min: 0, max: 5 }, acquireConnectionTimeout: 5_000 });
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
    await this.db.raw(createSchema!);
    if (await this.db.schema.withSchema(this.schema).hasTable(this.table)) return;
    try {
      for (const statement of createTable!.split(/;\n/)) await this.db.raw(statement);
    } catch (err) {
      // Two hosts starting at once: the other one created it first.
      if (!(await this.db.schema.withSchema(this.schema).hasTable(this.table))) throw err;
    }
  }

  readQuery(sid: string, now: number): Knex.QueryBuilder {
    return this.rows().select('sess').where('sid', sid).andWhere('expires', '>', now).first();
  }

  protected async read(sid: string, now: number): Promise<string | undefined> {
    const row = (await this.readQuery(sid, now)) as { sess: string } | undefined;
    return row?.sess;
  }

  /** Insert or replace. knex has no upsert for SQL Server: update first, insert when no row was there. */
  protected async write(sid: string, sess: string, expires: number): Promise<void> {
    if (this.dialect !== 'mssql') {
      await this.rows().insert({ sid, sess, expires }).onConflict('sid').merge(['sess', 'expires']);
      return;
    }
    const updated = await this.updateQuery(sid, sess, expires);
    if (updated > 0) return;
    try {
      await this.rows().insert({ sid, sess, expires });
    } catch (err) {
      if ((await this.updateQuery(sid, sess, expires)) === 0) throw err;
    }
  }

  updateQuery(sid: string, sess: string, expires: number): Knex.QueryBuilder<object, number> {
    return this.rows().where('sid', sid).update({ sess, expires });
  }

  touchQuery(sid: string, expires: number, now: number): Knex.QueryBuilder<object, number> {
    return this.rows().where('sid', sid).andWhere('expires', '>', now).update({ expires });
  }

  protected async extend(sid: string, expires: number): Promise<void> {
    await this.touchQuery(sid, expires, Date.now());
  }

  protected async remove(sid: string): Promise<void> {
    await this.rows().where('sid', sid).delete();
  }

  cleanupQuery(now: number): Knex.QueryBuilder<object, number> {
    return this.rows().where('expires', '<=', now).delete();
  }

  async cleanup(now: number): Promise<number> {
    return this.cleanupQuery(now);
  }

  async shutdown(): Promise<void> {
    await this.db.destroy();
  }
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

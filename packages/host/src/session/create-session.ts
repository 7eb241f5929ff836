import session from 'express-session';
import createMemoryStore from 'memorystore';
import type { RequestHandler } from 'express';
import type { SessionStateSettings } from '../settings/schema.js';
import { SettingsError } from '../settings/load.js';
import type { Logger } from '../logging/logger.js';
import type { Knex } from 'knex';
import {
  ConnectionStringError,
  parseMySqlConnectionString,
  parsePostgreSqlConnectionString,
  parseRedisConnectionString,
  parseSqlServerConnectionString,
  type MySqlConnection,
  type PostgreSqlConnection,
  type SqlConnection,
  type SqlServerConnection,
} from '../settings/connection-string.js';
import type * as SqlStore from './sql-store.js';
import { describeError, type SharedSessionStore } from './store-base.js';
import { ownCookieHeader } from '../keys/cookie-value.js';

export interface SessionState {
  /** The one session middleware: both Express applications and WebSocket upgrades run it. */
  middleware: RequestHandler;
  store: session.Store;
  /** The store when it is shared between processes (every `CacheType` but `Memory`). */
  shared: SharedSessionStore | undefined;
  close(): Promise<void>;
}

/**
 * Phase 3: `SessionState` (docs/sessions.md). `Memory` keeps sessions in this process (bounded,
 * least recently used first); `MySql`, `SqlServer`, `PostgreSql` and `Redis` share them between
 * processes and hosts. `secrets`: the first signs the session cookie, all of them verify it (key
 * rotation, docs/sessions.md). Returns undefined when `IsSession` is false or the cookie name is
 * empty (as the original).
 */
export async function createSessionState(
  state: SessionStateSettings,
  secrets: string[],
  settingsFile: string,
  logger: Logger,
): Promise<SessionState | undefined> {
  if (!state.IsSession || state.SessionCookieName.trim() === '') return undefined;
  const idleMs = state.IdleTimeoutMinutes * 60_000;
  let store: session.Store;
  let shared: SharedSessionStore | undefined;
  let close: () => Promise<void>;
  if (state.CacheType === 'Memory') {
    const MemoryStore = createMemoryStore(session);
    const memory = new MemoryStore({ checkPeriod: Math.min(idleMs, 60_000), max: state.MemoryMaxEntries, ttl: idleMs });
    store = memory;
    close = async () => memory.stopInterval();
  } else {
    const sharedStore = await createSharedStore(state, idleMs, settingsFile, logger);
    try {
      await sharedStore.waitUntilReady(state.StoreStartupWaitSeconds * 1000);
    } catch (err) {
      await sharedStore.shutdown().catch(() => {});
      throw err;
    }
    logger.info(`session store ${sharedStore.kind} at ${sharedStore.where} is ready`);
    const timer = setInterval(() => {
      sharedStore.cleanup(Date.now()).then(
        (n) => n > 0 && logger.debug(`session store ${sharedStore.kind}: ${n} expired sessions deleted`),
        (err: unknown) =>
          logger.warn(
            `session store ${sharedStore.kind} at ${sharedStore.where}: clean-up failed: ${describeError(err)}`,
          ),
      );
    }, state.CleanupIntervalSeconds * 1000);
    timer.unref();
    store = shared = sharedStore;
    close = async () => {
      clearInterval(timer);
      await sharedStore.shutdown();
    };
  }
  const name = state.SessionCookieName;
  const sessions = session({
    name,
    secret: secrets,
    store,
    resave: false,
    saveUninitialized: false,
    rolling: false,
    cookie: { httpOnly: true, sameSite: 'lax', secure: 'auto', path: '/' },
  });
  // express-session parses and percent-decodes every cookie of the header to find its own, and a
  // signed-in browser sends the whole sign-in set with it: it is shown a header with its own cookie
  // alone, which it reads before it calls the store, and the request gets its header back before
  // anything else runs (docs/benchmarks.md "Where a signed-in request's time goes").
  const middleware: RequestHandler = (req, res, next) => {
    const header = req.headers.cookie;
    if (header === undefined) return sessions(req, res, next);
    const parsed = Object.hasOwn(req, 'cookies');
    let given = false;
    const giveBack = () => {
      if (given) return;
      given = true;
      req.headers.cookie = header;
      // Without its cookie express-session looks in `req.cookies`, parsed on reading: from this header.
      if (!parsed) Reflect.deleteProperty(req, 'cookies');
    };
    req.headers.cookie = ownCookieHeader(header, name);
    try {
      sessions(req, res, (err?: unknown) => {
        giveBack();
        next(err);
      });
    } finally {
      giveBack();
    }
  };
  return { middleware, store, shared, close };
}

/**
 * The store's code (knex and a database driver, or the Redis client) is loaded only when the
 * settings name that store: a host on the Memory store, and every `ack` command that serves no
 * sessions, start without it (docs/sessions.md "Libraries, and why").
 */
async function createSharedStore(
  state: SessionStateSettings,
  idleMs: number,
  settingsFile: string,
  logger: Logger,
): Promise<SharedSessionStore> {
  const key = (name: string) => `AppSettings:SessionState:${name}`;
  const timeoutMs = state.StoreTimeoutSeconds * 1000;
  const need = (name: keyof SessionStateSettings & string) => {
    const value = state[name];
    if (typeof value !== 'string' || value.trim() === '') {
      throw new SettingsError(`${settingsFile}: ${key(name)} is empty; CacheType "${state.CacheType}" needs it`);
    }
    return value;
  };
  try {
    switch (state.CacheType) {
      case 'MySql':
      case 'PostgreSql':
      case 'SqlServer':
        return await createSqlStore(state.CacheType, need, key, idleMs, logger, timeoutMs);
      case 'Redis': {
        await needPackages('Redis', ['redis']);
        const { RedisSessionStore } = await import('./redis-store.js');
        const c = parseRedisConnectionString(need('RedisConnectionString'), key('RedisConnectionString'));
        return new RedisSessionStore(c, state.RedisKeyPrefix, idleMs, logger, timeoutMs);
      }
      default:
        throw new SettingsError(
          `${settingsFile}: ${key('CacheType')}: "${String(state.CacheType)}" is not a shared store`,
        );
    }
  } catch (err) {
    if (err instanceof ConnectionStringError) throw new SettingsError(`${settingsFile}: ${err.message}`);
    throw err;
  }
}

/** The parsed connection string of each SQL store. */
interface SqlConnections {
  MySql: MySqlConnection;
  PostgreSql: PostgreSqlConnection;
  SqlServer: SqlServerConnection;
}

type SqlCacheType = keyof SqlConnections;
type SessionSetting = keyof SessionStateSettings & string;

/** What every parsed SQL connection string has: `unused` and `poolMax` where the parser reads them. */
type CommonSqlConnection = SqlConnection & { unused?: readonly string[]; poolMax?: number };

/**
 * What differs between the SQL stores (docs/sessions.md). `knexConnection` takes the lazily loaded
 * `sql-store.js` module, so that knex is loaded only for a SQL store.
 */
interface SqlDriver<C extends CommonSqlConnection> {
  /** The packages the store needs (optional peer dependencies of `@ack/host`). */
  packages: readonly string[];
  dialect: SqlStore.SqlDialect;
  parse(text: string, setting: string): C;
  knexConnection(sql: typeof SqlStore, c: C): Knex.StaticConnectionConfig;
  connectionKey: SessionSetting;
  schemaKey: SessionSetting;
  tableKey: SessionSetting;
}

const SQL_DRIVERS: { [K in SqlCacheType]: SqlDriver<SqlConnections[K]> } = {
  MySql: {
    packages: ['knex', 'mysql2'],
    dialect: 'mysql2',
    parse: parseMySqlConnectionString,
    knexConnection: (sql, c) => sql.mySqlKnexConnection(c),
    connectionKey: 'MySqlConnectionString',
    schemaKey: 'MySqlSchemaName',
    tableKey: 'MySqlTableName',
  },
  PostgreSql: {
    packages: ['knex', 'pg'],
    dialect: 'pg',
    parse: parsePostgreSqlConnectionString,
    knexConnection: (sql, c) => sql.postgreSqlKnexConnection(c),
    connectionKey: 'PostgreSqlConnectionString',
    schemaKey: 'PostgreSqlSchemaName',
    tableKey: 'PostgreSqlTableName',
  },
  SqlServer: {
    packages: ['knex', 'tedious'],
    dialect: 'mssql',
    parse: parseSqlServerConnectionString,
    knexConnection: (sql, c) => sql.sqlServerKnexConnection(c),
    connectionKey: 'SqlServerConnectionString',
    schemaKey: 'SqlServerSchemaName',
    tableKey: 'SqlServerTableName',
  },
};

/** A SQL store: its packages checked, then knex loaded, the connection string read, the store made. */
async function createSqlStore<K extends SqlCacheType>(
  cacheType: K,
  need: (name: SessionSetting) => string,
  key: (name: string) => string,
  idleMs: number,
  logger: Logger,
  timeoutMs: number,
): Promise<SharedSessionStore> {
  const driver: SqlDriver<SqlConnections[K]> = SQL_DRIVERS[cacheType];
  await needPackages(cacheType, driver.packages);
  const sql = await import('./sql-store.js');
  const parsed = driver.parse(need(driver.connectionKey), key(driver.connectionKey));
  const c: CommonSqlConnection = parsed;
  if (c.unused) noteUnused(logger, key(driver.connectionKey), c.unused);
  return new sql.SqlSessionStore(
    cacheType,
    `${c.host}:${c.port}`,
    driver.dialect,
    driver.knexConnection(sql, parsed),
    need(driver.schemaKey),
    need(driver.tableKey),
    idleMs,
    logger,
    timeoutMs,
    c.poolMax,
  );
}

/** The connector keywords of the original's string that mean nothing here: accepted, said once. */
function noteUnused(logger: Logger, setting: string, unused: readonly string[]): void {
  if (unused.length > 0)
    logger.info(`${setting}: ${unused.join(', ')} accepted and not used (no meaning for this host's session store)`);
}

/**
 * The database packages are optional peer dependencies of `@ack/host` (the `ack` command brings
 * them): a store whose packages are not installed stops start-up with the line that installs them
 * (docs/sessions.md "Libraries, and why").
 */
async function needPackages(cacheType: string, names: readonly string[]): Promise<void> {
  const missing: string[] = [];
  for (const name of names) {
    try {
      await import(name);
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      if ((e.code === 'ERR_MODULE_NOT_FOUND' || e.code === 'MODULE_NOT_FOUND') && e.message.includes(`'${name}'`))
        missing.push(name);
      else throw err;
    }
  }
  if (missing.length > 0)
    throw new Error(
      `AppSettings:SessionState:CacheType "${cacheType}" needs ${missing.join(' and ')}, which ${missing.length === 1 ? 'is' : 'are'} not installed: npm install ${missing.join(' ')}`,
    );
}

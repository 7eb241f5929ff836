import {
  ConnectionStringError,
  parseMySqlConnectionString,
  parsePostgreSqlConnectionString,
  parseRedisConnectionString,
  parseSqlServerConnectionString,
} from './connection-string.js';
import type { SessionStateSettings } from './schema.js';

type SharedStore = Exclude<SessionStateSettings['CacheType'], 'Memory'>;

interface StoreKeys {
  connection: keyof SessionStateSettings & string;
  parse(text: string, setting: string): unknown;
  /** Schema and table: SQL stores only. */
  names?: { schema: keyof SessionStateSettings & string; table: keyof SessionStateSettings & string };
  /** The database's longest identifier, where a longer one fails rather than being cut. */
  maxName?: number;
}

const STORES: Record<SharedStore, StoreKeys> = {
  MySql: {
    connection: 'MySqlConnectionString',
    parse: parseMySqlConnectionString,
    names: { schema: 'MySqlSchemaName', table: 'MySqlTableName' },
    maxName: 64,
  },
  PostgreSql: {
    connection: 'PostgreSqlConnectionString',
    parse: parsePostgreSqlConnectionString,
    names: { schema: 'PostgreSqlSchemaName', table: 'PostgreSqlTableName' },
  },
  SqlServer: {
    connection: 'SqlServerConnectionString',
    parse: parseSqlServerConnectionString,
    names: { schema: 'SqlServerSchemaName', table: 'SqlServerTableName' },
    maxName: 128,
  },
  Redis: { connection: 'RedisConnectionString', parse: parseRedisConnectionString },
};

export interface SessionStoreProblem {
  /** The key under `AppSettings:SessionState`. */
  key: keyof SessionStateSettings & string;
  /** The problem, naming `AppSettings:SessionState:<key>`. */
  message: string;
}

/**
 * What a shared session store's settings must hold for start-up to use them (docs/sessions.md):
 * the connection string of the `CacheType`, readable, and for a SQL store a schema and a table name
 * the database takes. Part of reading the settings, so `ack check`, `ack serve`, the primary of
 * `--workers` and a watched configuration change all refuse the same files.
 */
export function sessionStoreProblems(state: SessionStateSettings): SessionStoreProblem[] {
  // No session (or no cookie to carry it): the store is never made, as start-up does.
  if (!state.IsSession || state.SessionCookieName.trim() === '' || state.CacheType === 'Memory') return [];
  const store = STORES[state.CacheType];
  const problems: SessionStoreProblem[] = [];
  const setting = (key: string) => `AppSettings:SessionState:${key}`;
  const need = (key: keyof SessionStateSettings & string): string | undefined => {
    const value = state[key];
    if (typeof value === 'string' && value.trim() !== '') return value;
    problems.push({ key, message: `${setting(key)} is empty; CacheType "${state.CacheType}" needs it` });
    return undefined;
  };
  const connection = need(store.connection);
  if (connection !== undefined) {
    try {
      store.parse(connection, setting(store.connection));
    } catch (err) {
      if (!(err instanceof ConnectionStringError)) throw err;
      problems.push({ key: store.connection, message: err.message });
    }
  }
  for (const key of store.names ? [store.names.schema, store.names.table] : []) {
    const name = need(key);
    if (name === undefined) continue;
    const problem = nameProblem(name, state.CacheType, store.maxName);
    if (problem) problems.push({ key, message: `${setting(key)}: ${JSON.stringify(name)} ${problem}` });
  }
  return problems;
}

function nameProblem(name: string, store: SharedStore, maxName: number | undefined): string | undefined {
  // The store's queries read a dot as schema.table: such a table would never be found.
  if (name.includes('.')) return 'holds a dot; a schema or table name cannot';
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'holds a control character';
  if (maxName !== undefined && name.length > maxName) return `is longer than ${store} takes (${maxName} characters)`;
  if (store === 'MySql' && name.endsWith(' ')) return 'ends with a space, which MySQL refuses';
  return undefined;
}

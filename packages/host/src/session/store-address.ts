import type { SessionStateSettings } from '../settings/schema.js';
import {
  parseMySqlConnectionString,
  parsePostgreSqlConnectionString,
  parseRedisConnectionString,
  parseSqlServerConnectionString,
} from '../settings/connection-string.js';

/** Where a shared session store is, as start-up would connect to it: for `ack check --connect`. */
export interface SessionStoreAddress {
  /** `MySql`, `PostgreSql`, `SqlServer` or `Redis`. */
  kind: string;
  /** The setting that names it, e.g. `AppSettings:SessionState:MySqlConnectionString`. */
  setting: string;
  host: string;
  port: number;
}

const PARSERS = {
  MySql: ['MySqlConnectionString', parseMySqlConnectionString],
  PostgreSql: ['PostgreSqlConnectionString', parsePostgreSqlConnectionString],
  SqlServer: ['SqlServerConnectionString', parseSqlServerConnectionString],
  Redis: ['RedisConnectionString', parseRedisConnectionString],
} as const;

/**
 * The shared store the settings name, read by the parsers start-up uses (no driver is loaded);
 * undefined when sessions are off or kept in memory. Throws `ConnectionStringError` for a string
 * start-up would refuse.
 */
export function sessionStoreAddress(state: SessionStateSettings): SessionStoreAddress | undefined {
  if (!state.IsSession || state.SessionCookieName.trim() === '' || state.CacheType === 'Memory') return undefined;
  const [name, parse] = PARSERS[state.CacheType];
  const setting = `AppSettings:SessionState:${name}`;
  const { host, port } = parse(state[name], setting);
  return { kind: state.CacheType, setting, host, port };
}

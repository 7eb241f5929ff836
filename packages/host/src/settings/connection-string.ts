// Why this file is long: it holds the keyword tables of four drivers (MySQL/MariaDB, SQL Server,
// PostgreSQL, Redis) with the .NET spellings each accepts; the tables are data, the code is small.
/**
 * Connection strings in the .NET form the original host's settings use (`Key=Value;Key=Value`),
 * turned into the options of the Node drivers. Pure: no I/O. Every error names the setting and the
 * keyword, never the password (see docs/sessions.md).
 */

export class ConnectionStringError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConnectionStringError';
  }
}

/**
 * Splits `Key=Value;...` into keywords, lower-cased and without spaces, as the .NET connectors
 * compare them (`User ID`, `UserID` and `user id` are one keyword).
 * Values may be quoted with `"` or `'` (a doubled quote inside stands for one) to hold `;` or `=`.
 */
export function parseKeyValues(text: string, setting: string): Map<string, string> {
  const out = new Map<string, string>();
  let i = 0;
  while (i < text.length) {
    while (i < text.length && (text[i] === ';' || /\s/.test(text[i]!))) i++;
    if (i >= text.length) break;
    const eq = text.indexOf('=', i);
    const semi = text.indexOf(';', i);
    if (eq < 0 || (semi >= 0 && semi < eq)) {
      // The part itself is not shown: a stray value may well be a password.
      throw new ConnectionStringError(`${setting}: the part at position ${i + 1} is not of the form Keyword=Value`);
    }
    const key = keyword(text.slice(i, eq));
    if (key === '') throw new ConnectionStringError(`${setting}: a value without a keyword at position ${i}`);
    i = eq + 1;
    while (i < text.length && text[i] === ' ') i++;
    let value: string;
    const quote = text[i];
    if (quote === '"' || quote === "'") {
      value = '';
      i++;
      for (;;) {
        if (i >= text.length)
          throw new ConnectionStringError(`${setting}: the value of ${key} has no closing ${quote}`);
        if (text[i] === quote) {
          if (text[i + 1] === quote) {
            value += quote;
            i += 2;
            continue;
          }
          i++;
          break;
        }
        value += text[i++];
      }
      while (i < text.length && text[i] !== ';') {
        if (!/\s/.test(text[i]!))
          throw new ConnectionStringError(`${setting}: unexpected text after the quoted value of ${key}`);
        i++;
      }
    } else {
      const end = text.indexOf(';', i);
      value = text.slice(i, end < 0 ? undefined : end).trim();
      i = end < 0 ? text.length : end;
    }
    out.set(key, value);
  }
  return out;
}

type Keywords = Map<string, string>;

/** A keyword as compared: lower case, no spaces. */
const keyword = (name: string) => name.replace(/\s+/g, '').toLowerCase();
const keywords = (...names: string[]) => [...new Set(names.map(keyword))];

function pick(kv: Keywords, names: readonly string[]): string | undefined {
  for (const n of names) {
    const v = kv.get(keyword(n));
    if (v !== undefined && v !== '') return v;
  }
  return undefined;
}

const PASSWORD_KEYWORDS = keywords('pwd', 'password');

/**
 * A value for an error message. A value holding `;`, `=` or a quote came from a quote left open,
 * which swallowed the parts after it (a password among them), so it is not shown.
 */
function shownValue(value: string): string {
  return /^[^;="',]{0,64}$/.test(value) ? `"${value}"` : '(not shown: it holds ; = , or a quote)';
}

/**
 * An unknown keyword right after a password is most likely the password's own tail (an unquoted
 * password holding `;`), so it is not shown then.
 */
function checkKnown(kv: Keywords, names: readonly string[], setting: string): void {
  const known = keywords(...names);
  let previous = '';
  for (const key of kv.keys()) {
    if (!known.includes(key)) {
      if (PASSWORD_KEYWORDS.includes(previous)) {
        throw new ConnectionStringError(
          `${setting}: unknown keyword after ${previous} (a value holding ";" must be quoted)`,
        );
      }
      throw new ConnectionStringError(`${setting}: unknown keyword "${key}"`);
    }
    previous = key;
  }
}

function port(value: string | undefined, fallback: number, setting: string): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 65535)
    throw new ConnectionStringError(`${setting}: Port ${shownValue(value)} is not a port number (1-65535)`);
  return n;
}

function bool(value: string | undefined, keyword: string, setting: string): boolean | undefined {
  if (value === undefined) return undefined;
  const v = value.toLowerCase();
  if (v === 'true' || v === 'yes' || v === '1') return true;
  if (v === 'false' || v === 'no' || v === '0') return false;
  throw new ConnectionStringError(`${setting}: ${keyword} ${shownValue(value)} is not true or false`);
}

function seconds(value: string | undefined, keyword: string, setting: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0)
    throw new ConnectionStringError(`${setting}: ${keyword} ${shownValue(value)} is not a number of seconds`);
  return n;
}

function required(value: string | undefined, what: string, setting: string): string {
  if (value === undefined) throw new ConnectionStringError(`${setting}: ${what} is missing`);
  return value;
}

const HOST = ['server', 'host', 'data source', 'datasource', 'address', 'addr', 'network address'];
const DATABASE = ['database', 'initial catalog'];
const USER = ['uid', 'user id', 'userid', 'user', 'username', 'user name'];
const PASSWORD = ['pwd', 'password'];
const TIMEOUT = ['connect timeout', 'connection timeout', 'connecttimeout', 'timeout'];

export interface SqlConnection {
  host: string;
  port: number;
  database: string | undefined;
  user: string | undefined;
  password: string | undefined;
  connectTimeoutSeconds: number | undefined;
}

/** The keywords MySQL, PostgreSQL and SQL Server connection strings have in common. */
function sqlConnection(
  kv: Keywords,
  setting: string,
  defaultPort: number,
  hostWord: string,
  timeoutWord: string,
): SqlConnection {
  return {
    host: required(pick(kv, HOST), hostWord, setting),
    port: port(pick(kv, ['port']), defaultPort, setting),
    database: pick(kv, DATABASE),
    user: pick(kv, USER),
    password: pick(kv, PASSWORD),
    connectTimeoutSeconds: seconds(pick(kv, TIMEOUT), timeoutWord, setting),
  };
}

/** TLS to the database: MySqlConnector's and Npgsql's spellings of the same five modes. */
export type SslMode = 'none' | 'prefer' | 'require' | 'verify-ca' | 'verify-full';

const SSL_MODES: Record<string, SslMode> = {
  none: 'none',
  disable: 'none',
  preferred: 'prefer',
  prefer: 'prefer',
  allow: 'prefer',
  required: 'require',
  require: 'require',
  verifyca: 'verify-ca',
  verifyfull: 'verify-full',
};

function sslMode(kv: Keywords, setting: string): SslMode {
  const text = pick(kv, ['sslmode', 'ssl mode']);
  if (text === undefined) return 'none';
  const mode = SSL_MODES[text.toLowerCase().replace(/[^a-z]/g, '')];
  if (!mode)
    throw new ConnectionStringError(
      `${setting}: SSL Mode ${shownValue(text)} is not one of None, Preferred, Required, VerifyCA, VerifyFull`,
    );
  return mode;
}

/** MySQL and MariaDB (MySqlConnector keywords): `Server=...;Port=3306;Database=...;Uid=...;Pwd=...;SslMode=...`. */
export interface MySqlConnection extends SqlConnection {
  ssl: SslMode;
  /** Most pooled connections (`Maximum Pool Size`; 1 with `Pooling=false`); undefined for the store's own. */
  poolMax: number | undefined;
  /** Keywords of the .NET connector that mean nothing to this host's store: accepted, and named once at start. */
  unused: string[];
}

/**
 * MySqlConnector's keywords that this host's session store has no use for (docs/sessions.md): the
 * original's own strings carry some of them (`Persist Security Info`, `Allow User Variables`,
 * `Charset`), so they are accepted, not refused. `Charset` is among them: the store always talks
 * utf8mb4, which holds every session (MySQL's `utf8` cannot hold all of Unicode).
 */
const MYSQL_UNUSED = keywords(
  'persist security info',
  'allow user variables',
  'charset',
  'character set',
  'default command timeout',
  'command timeout',
  'load balance',
  'connection protocol',
  'protocol',
  'pipe name',
  'pipe',
  'certificate file',
  'certificate password',
  'certificate store location',
  'certificate thumbprint',
  'ssl cert',
  'ssl key',
  'ssl ca',
  'ca certificate file',
  'tls version',
  'tls cipher suites',
  'connection lifetime',
  'connection reset',
  'defer connection reset',
  'connection idle ping time',
  'connection idle timeout',
  'minimum pool size',
  'min pool size',
  'dns check interval',
  'allow load local infile',
  'allow public key retrieval',
  'allow zero datetime',
  'application name',
  'auto enlist',
  'cancellation timeout',
  'compress',
  'use compression',
  'convert zero datetime',
  'datetime kind',
  'force synchronous',
  'guid format',
  'ignore command transaction',
  'ignore prepare',
  'interactive session',
  'interactive',
  'keep alive',
  'keepalive',
  'no backslash escapes',
  'old guids',
  'pipelining',
  'server redirection mode',
  'server rsa public key file',
  'server spn',
  'treat tiny as boolean',
  'use affected rows',
  'use xa transactions',
  'allow batch',
  'use usage advisor',
  'use performance monitor',
  'sql server mode',
  'table cache',
  'procedure cache size',
);
const MYSQL_POOL = keywords('pooling', 'maximum pool size', 'max pool size', 'maxpoolsize');

/** Accepted keywords with no use here, in the order given (for the start-up line). */
function unusedOf(kv: Keywords, unused: readonly string[]): string[] {
  return [...kv.keys()].filter((k) => unused.includes(k));
}

function poolMax(kv: Keywords, setting: string): number | undefined {
  if (bool(pick(kv, ['pooling']), 'Pooling', setting) === false) return 1;
  const text = pick(kv, ['maximum pool size', 'max pool size']);
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1)
    throw new ConnectionStringError(`${setting}: Maximum Pool Size ${shownValue(text)} is not a whole number above 0`);
  return n;
}

export function parseMySqlConnectionString(text: string, setting = 'MySqlConnectionString'): MySqlConnection {
  const kv = parseKeyValues(text, setting);
  checkKnown(
    kv,
    [...HOST, 'port', ...DATABASE, ...USER, ...PASSWORD, ...TIMEOUT, 'sslmode', ...MYSQL_POOL, ...MYSQL_UNUSED],
    setting,
  );
  return {
    ...sqlConnection(kv, setting, 3306, 'Server', 'Connect Timeout'),
    ssl: sslMode(kv, setting),
    poolMax: poolMax(kv, setting),
    unused: unusedOf(kv, MYSQL_UNUSED),
  };
}

/** PostgreSQL (Npgsql keywords): `Host=...;Port=5432;Database=...;Username=...;Password=...;SSL Mode=...`. */
export interface PostgreSqlConnection extends SqlConnection {
  ssl: SslMode;
}

export function parsePostgreSqlConnectionString(
  text: string,
  setting = 'PostgreSqlConnectionString',
): PostgreSqlConnection {
  const kv = parseKeyValues(text, setting);
  checkKnown(
    kv,
    [
      ...HOST,
      'port',
      ...DATABASE,
      ...USER,
      ...PASSWORD,
      ...TIMEOUT,
      'sslmode',
      'ssl mode',
      'pooling',
      'application name',
      'search path',
    ],
    setting,
  );
  return { ...sqlConnection(kv, setting, 5432, 'Host', 'Timeout'), ssl: sslMode(kv, setting) };
}

/**
 * SQL Server (SqlClient keywords): `Data Source=host,1433` (or `tcp:host,port`, `host\instance`),
 * `Initial Catalog`, `User ID`, `Password`, `Encrypt`, `TrustServerCertificate`. `Integrated
 * Security=true` (Windows authentication) has no driver on Node: it is refused with a clear message.
 */
export interface SqlServerConnection extends SqlConnection {
  instanceName: string | undefined;
  encrypt: boolean | 'strict';
  trustServerCertificate: boolean;
  applicationName: string | undefined;
  /** Most pooled connections (`Max Pool Size`; 1 with `Pooling=false`); undefined for the store's own. */
  poolMax: number | undefined;
  /** Keywords of Microsoft.Data.SqlClient that mean nothing to this host's store: accepted, named once at start. */
  unused: string[];
}

/** Microsoft.Data.SqlClient's keywords that this host's session store has no use for (docs/sessions.md). */
const SQLSERVER_UNUSED = keywords(
  'persist security info',
  'multipleactiveresultsets',
  'multiple active result sets',
  'min pool size',
  'application intent',
  'applicationintent',
  'attachdbfilename',
  'extended properties',
  'initial file name',
  'column encryption setting',
  'command timeout',
  'connect retry count',
  'connectretrycount',
  'connect retry interval',
  'connectretryinterval',
  'current language',
  'language',
  'enclave attestation url',
  'failover partner',
  'ip address preference',
  'load balance timeout',
  'connection lifetime',
  'multi subnet failover',
  'multisubnetfailover',
  'packet size',
  'pool blocking period',
  'replication',
  'transaction binding',
  'type system version',
  'user instance',
  'workstation id',
  'wsid',
  'host name in certificate',
  'hostnameincertificate',
  'server certificate',
  'server spn',
  'enlist',
  'network library',
  'net',
);

export function parseSqlServerConnectionString(
  text: string,
  setting = 'SqlServerConnectionString',
): SqlServerConnection {
  const kv = parseKeyValues(text, setting);
  checkKnown(
    kv,
    [
      ...HOST,
      'port',
      ...DATABASE,
      ...USER,
      ...PASSWORD,
      ...TIMEOUT,
      'integrated security',
      'trusted_connection',
      'trustservercertificate',
      'trust server certificate',
      'encrypt',
      'application name',
      'app',
      'pooling',
      'max pool size',
      ...SQLSERVER_UNUSED,
    ],
    setting,
  );
  const integrated = (pick(kv, ['integrated security', 'trusted_connection']) ?? 'false').toLowerCase();
  if (integrated === 'true' || integrated === 'sspi' || integrated === 'yes') {
    throw new ConnectionStringError(
      `${setting}: Integrated Security (Windows authentication) is not available on Node; use User ID and Password`,
    );
  }
  if (integrated !== 'false' && integrated !== 'no')
    throw new ConnectionStringError(
      `${setting}: Integrated Security ${shownValue(integrated)} is not true, false or SSPI`,
    );
  const common = sqlConnection(kv, setting, 1433, 'Data Source', 'Connect Timeout');
  let source = common.host.replace(/^tcp:/i, '');
  let portText = pick(kv, ['port']);
  const comma = source.indexOf(',');
  if (comma >= 0) {
    portText = source.slice(comma + 1).trim();
    source = source.slice(0, comma).trim();
  }
  let instanceName: string | undefined;
  const slash = source.indexOf('\\');
  if (slash >= 0) {
    instanceName = source.slice(slash + 1);
    source = source.slice(0, slash);
  }
  if (source === '.' || source.toLowerCase() === '(local)') source = 'localhost';
  const encryptText = (pick(kv, ['encrypt']) ?? 'true').toLowerCase();
  const encrypt =
    encryptText === 'strict'
      ? 'strict'
      : encryptText === 'mandatory'
        ? true
        : encryptText === 'optional'
          ? false
          : bool(encryptText, 'Encrypt', setting)!;
  return {
    ...common,
    host: source,
    port: port(portText, 1433, setting),
    instanceName,
    encrypt,
    trustServerCertificate:
      bool(pick(kv, ['trustservercertificate', 'trust server certificate']), 'TrustServerCertificate', setting) ??
      false,
    applicationName: pick(kv, ['application name', 'app']),
    poolMax: poolMax(kv, setting),
    unused: unusedOf(kv, SQLSERVER_UNUSED),
  };
}

/**
 * Redis in the StackExchange.Redis form: `host:port[,host2:port],password=...,user=...,ssl=true,
 * defaultDatabase=0,connectTimeout=5000`. The first endpoint is used.
 */
export interface RedisConnection {
  host: string;
  port: number;
  user: string | undefined;
  password: string | undefined;
  database: number;
  tls: boolean;
  connectTimeoutMs: number | undefined;
}

const REDIS_OPTIONS = [
  'password',
  'user',
  'ssl',
  'defaultdatabase',
  'connecttimeout',
  'abortconnect',
  'allowadmin',
  'name',
  'synctimeout',
  'asynctimeout',
  'connectretry',
  'keepalive',
  'sslhost',
];

export function parseRedisConnectionString(text: string, setting = 'RedisConnectionString'): RedisConnection {
  const endpoints: string[] = [];
  const options = new Map<string, string>();
  // This form has no quoting: a password holding "," splits, and its tail reads as an endpoint or
  // an option. The part right after `password=` is therefore never taken as an endpoint (it would be
  // dialled, and named in connection errors) nor named in a message.
  let afterPassword = false;
  for (const raw of text.split(',')) {
    const part = raw.trim();
    if (part === '') continue;
    const eq = part.indexOf('=');
    const key = eq < 0 ? undefined : part.slice(0, eq).trim().toLowerCase();
    if (afterPassword && (key === undefined || !REDIS_OPTIONS.includes(key))) {
      throw new ConnectionStringError(
        `${setting}: the part after password= is neither an option nor allowed as an endpoint (a password cannot hold "," in this form; write the endpoints first)`,
      );
    }
    afterPassword = key === 'password';
    if (key === undefined) endpoints.push(part);
    else options.set(key, part.slice(eq + 1).trim());
  }
  for (const key of options.keys())
    if (!REDIS_OPTIONS.includes(key)) throw new ConnectionStringError(`${setting}: unknown option "${key}"`);
  const first = endpoints[0];
  if (first === undefined) throw new ConnectionStringError(`${setting}: no host:port endpoint`);
  const m = /^(\[[^\]]+\]|[^:]+)(?::(.*))?$/.exec(first);
  if (!m) throw new ConnectionStringError(`${setting}: "${first}" is not host:port`);
  const db = options.get('defaultdatabase');
  const database = db === undefined ? 0 : Number(db);
  if (!Number.isInteger(database) || database < 0)
    throw new ConnectionStringError(`${setting}: defaultDatabase ${shownValue(db ?? '')} is not a database number`);
  const timeout = options.get('connecttimeout');
  const connectTimeoutMs = timeout === undefined ? undefined : Number(timeout);
  if (connectTimeoutMs !== undefined && !(Number.isFinite(connectTimeoutMs) && connectTimeoutMs >= 0)) {
    throw new ConnectionStringError(
      `${setting}: connectTimeout ${shownValue(timeout ?? '')} is not a number of milliseconds`,
    );
  }
  return {
    host: m[1]!.replace(/^\[|\]$/g, ''),
    port: port(m[2], 6379, setting),
    user: options.get('user') || undefined,
    password: options.get('password') || undefined,
    database,
    tls: bool(options.get('ssl'), 'ssl', setting) ?? false,
    connectTimeoutMs,
  };
}

/**
 * Where the tests find their real databases: the addresses the test run's global set-up settled on
 * (scripts/test-databases.mjs: the usual server where one answers, else a private one it started),
 * passed in `ACK_TEST_MYSQL`, `ACK_TEST_POSTGRES` and `ACK_TEST_REDIS` as `host:port`. MariaDB is
 * used as root without a password, PostgreSQL as `postgres` (trust), both with a database `test`.
 */
export interface DatabaseAddress {
  host: string;
  port: number;
}

function address(variable: string, defaultPort: number): DatabaseAddress {
  const m = /^\[?([^\]]*?)\]?:(\d+)$/.exec(process.env[variable]?.trim() ?? '');
  return m ? { host: m[1]!, port: Number(m[2]) } : { host: '127.0.0.1', port: defaultPort };
}

export function testDatabases() {
  const mysql = address('ACK_TEST_MYSQL', 3306);
  const postgres = address('ACK_TEST_POSTGRES', 5432);
  const redis = address('ACK_TEST_REDIS', 6379);
  return {
    mysql,
    postgres,
    redis,
    /** Options for mysql2's `createConnection` / knex. */
    mysqlConnection: { host: mysql.host, port: mysql.port, user: 'root', database: 'test' },
    /** Options for pg / knex. */
    postgresConnection: { host: postgres.host, port: postgres.port, user: 'postgres', database: 'test' },
    /**
     * `SessionState:MySqlConnectionString` exactly as the original host's own settings write it,
     * MySqlConnector keywords with no use here included (docs/sessions.md).
     */
    mysqlConnectionString: `Server=${mysql.host};Port=${mysql.port};Database=test;Uid=root;Pwd=;PersistSecurityInfo=True;SslMode=none;Charset=utf8;Allow User Variables=True;`,
    /** `SessionState:PostgreSqlConnectionString` in the original's form. */
    postgresConnectionString: `Host=${postgres.host};Port=${postgres.port};Database=test;Username=postgres;`,
    /** `SessionState:RedisConnectionString`. */
    redisConnectionString: `${redis.host}:${redis.port}`,
  };
}

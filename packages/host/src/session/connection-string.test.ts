import { describe, expect, it } from 'vitest';
import {
  ConnectionStringError,
  parseKeyValues,
  parseMySqlConnectionString,
  parsePostgreSqlConnectionString,
  parseRedisConnectionString,
  parseSqlServerConnectionString,
} from './connection-string.js';

const errorOf = (fn: () => unknown): ConnectionStringError => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConnectionStringError);
    return err as ConnectionStringError;
  }
  throw new Error('expected a ConnectionStringError');
};

describe('.NET connection strings', () => {
  it('reads keywords case-insensitively, quoted values with ; and doubled quotes', () => {
    const kv = parseKeyValues(`Server=db;  User  ID = me ;Password="a;b""c";Database='x=y';`, 'S');
    expect(Object.fromEntries(kv)).toEqual({ server: 'db', 'user id': 'me', password: 'a;b"c', database: 'x=y' });
  });

  it('MySQL / MariaDB: Server, Port, Database, Uid, Pwd, SslMode', () => {
    expect(
      parseMySqlConnectionString('Server=10.0.0.5;Port=3307;Database=app;Uid=ack;Pwd=s3cret;SslMode=Required;'),
    ).toEqual({
      host: '10.0.0.5',
      port: 3307,
      database: 'app',
      user: 'ack',
      password: 's3cret',
      connectTimeoutSeconds: undefined,
      ssl: 'require',
    });
    expect(parseMySqlConnectionString('Host=h;User Id=u;Password=p').port).toBe(3306);
  });

  it('PostgreSQL: Npgsql keywords', () => {
    expect(
      parsePostgreSqlConnectionString('Host=pg;Port=5433;Database=d;Username=u;Password=p;Timeout=3'),
    ).toMatchObject({
      host: 'pg',
      port: 5433,
      database: 'd',
      user: 'u',
      password: 'p',
      connectTimeoutSeconds: 3,
      ssl: 'none',
    });
  });

  it('SQL Server: Data Source with port or instance, Initial Catalog, Encrypt, TrustServerCertificate', () => {
    expect(
      parseSqlServerConnectionString(
        'Data Source=tcp:sql.example,14330;Initial Catalog=App;User ID=sa;Password=p;Encrypt=True;TrustServerCertificate=True;Connect Timeout=7',
      ),
    ).toEqual({
      host: 'sql.example',
      port: 14330,
      instanceName: undefined,
      database: 'App',
      user: 'sa',
      password: 'p',
      connectTimeoutSeconds: 7,
      encrypt: true,
      trustServerCertificate: true,
      applicationName: undefined,
    });
    const named = parseSqlServerConnectionString(
      'Server=.\\SQLEXPRESS;Database=d;User Id=u;Password=p;Encrypt=Optional;Integrated Security=False',
    );
    expect(named).toMatchObject({
      host: 'localhost',
      instanceName: 'SQLEXPRESS',
      encrypt: false,
      trustServerCertificate: false,
    });
  });

  it('SQL Server: Windows authentication is refused with a clear message', () => {
    expect(errorOf(() => parseSqlServerConnectionString('Server=s;Integrated Security=SSPI')).message).toMatch(
      /SqlServerConnectionString: Integrated Security \(Windows authentication\) is not available on Node/,
    );
  });

  it('Redis: the StackExchange.Redis form', () => {
    expect(
      parseRedisConnectionString('cache.local:6380,password=s3cret,ssl=true,defaultDatabase=2,abortConnect=false'),
    ).toEqual({
      host: 'cache.local',
      port: 6380,
      user: undefined,
      password: 's3cret',
      database: 2,
      tls: true,
      connectTimeoutMs: undefined,
    });
    expect(parseRedisConnectionString('localhost').port).toBe(6379);
  });

  it('names the setting and the keyword in errors, never the password', () => {
    const cases: [() => unknown, RegExp][] = [
      [() => parseMySqlConnectionString('Uid=u;Pwd=hunter22'), /MySqlConnectionString: Server is missing/],
      [() => parseMySqlConnectionString('Server=h;Port=99999;Pwd=hunter22'), /Port "99999" is not a port number/],
      [() => parseMySqlConnectionString('Server=h;Colour=blue;Pwd=hunter22'), /unknown keyword "colour"/],
      [() => parseMySqlConnectionString('Server=h;Pwd="hunter22'), /the value of pwd has no closing "/],
      [() => parseMySqlConnectionString('Server=h;hunter22'), /is not of the form Keyword=Value/],
      [
        () => parseSqlServerConnectionString('Server=h;Password=hunter22;TrustServerCertificate=maybe'),
        /TrustServerCertificate "maybe" is not true or false/,
      ],
      [() => parsePostgreSqlConnectionString('Host=h;Password=hunter22;SSL Mode=sometimes'), /SSL Mode "sometimes"/],
      [() => parseRedisConnectionString('password=hunter22'), /RedisConnectionString: no host:port endpoint/],
      [() => parseRedisConnectionString('h:1,password=hunter22,colour=blue'), /unknown option "colour"/],
    ];
    for (const [fn, pattern] of cases) {
      const err = errorOf(fn);
      expect(err.message).toMatch(pattern);
      expect(err.message).not.toContain('hunter22');
    }
  });
});

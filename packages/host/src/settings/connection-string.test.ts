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
    expect(Object.fromEntries(kv)).toEqual({ server: 'db', userid: 'me', password: 'a;b"c', database: 'x=y' });
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
      poolMax: undefined,
      unused: [],
    });
    expect(parseMySqlConnectionString('Host=h;User Id=u;Password=p').port).toBe(3306);
  });

  it("MySQL: the original host's own string, with MySqlConnector's keywords, is accepted as that connector does", () => {
    const original =
      'Server=127.0.0.1;Port=3306;Database=ack;Uid=ack;Pwd=s3cret;PersistSecurityInfo=True;SslMode=none;Charset=utf8;Allow User Variables=True;';
    expect(parseMySqlConnectionString(original)).toMatchObject({
      host: '127.0.0.1',
      port: 3306,
      database: 'ack',
      user: 'ack',
      password: 's3cret',
      ssl: 'none',
      unused: ['persistsecurityinfo', 'charset', 'allowuservariables'],
    });
    // Keywords compare without case and spaces, as the connector compares them.
    for (const spelling of ['Persist Security Info=true', 'persistsecurityinfo=true', 'PERSIST SECURITYINFO=true'])
      expect(parseMySqlConnectionString(`Server=h;${spelling}`).unused).toEqual(['persistsecurityinfo']);
    // Pooling: the pool's size, or one connection without pooling.
    expect(parseMySqlConnectionString('Server=h;Maximum Pool Size=12').poolMax).toBe(12);
    expect(parseMySqlConnectionString('Server=h;MaxPoolSize=3;Pooling=true').poolMax).toBe(3);
    expect(parseMySqlConnectionString('Server=h;Pooling=false').poolMax).toBe(1);
    expect(errorOf(() => parseMySqlConnectionString('Server=h;Max Pool Size=0')).message).toMatch(
      /Maximum Pool Size "0"/,
    );
    // The nearest neighbours of accepted keywords are still refused: a typo is not silently ignored.
    expect(errorOf(() => parseMySqlConnectionString('Server=h;Allow User Variable=True')).message).toMatch(
      /unknown keyword "allowuservariable"/,
    );
    expect(errorOf(() => parseMySqlConnectionString('Server=h;PersistSecurity=True')).message).toMatch(
      /unknown keyword/,
    );
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
      poolMax: undefined,
      unused: [],
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

  it('SQL Server: the keywords of Microsoft.Data.SqlClient are accepted; the unused ones are named', () => {
    const c = parseSqlServerConnectionString(
      'Data Source=db,1433;Initial Catalog=ack;User ID=ack;Password=p;Persist Security Info=False;MultipleActiveResultSets=True;Connect Retry Count=3;Max Pool Size=20;Application Intent=ReadWrite',
    );
    expect(c).toMatchObject({ host: 'db', port: 1433, database: 'ack', poolMax: 20 });
    expect(c.unused).toEqual([
      'persistsecurityinfo',
      'multipleactiveresultsets',
      'connectretrycount',
      'applicationintent',
    ]);
    expect(errorOf(() => parseSqlServerConnectionString('Data Source=db;Connect Retry Counts=3')).message).toMatch(
      /unknown keyword "connectretrycounts"/,
    );
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
      [() => parseRedisConnectionString('h:1,colour=blue,password=hunter22'), /unknown option "colour"/],
      [() => parseRedisConnectionString('h:1,password=hunter22,colour=blue'), /the part after password=/],
    ];
    for (const [fn, pattern] of cases) {
      const err = errorOf(fn);
      expect(err.message).toMatch(pattern);
      expect(err.message).not.toContain('hunter22');
    }
  });
});

import { describe, expect, it } from 'vitest';
import { SessionStateSchema } from './schema.js';
import { sessionStoreProblems } from './session-store.js';

const state = (values: Record<string, unknown>) => SessionStateSchema.parse(values);
const MYSQL = 'Server=db;Uid=ack;Pwd=pw-never-shown;';

describe('what start-up needs of a shared session store', () => {
  it('asks nothing of the Memory store, nor of a store no session uses', () => {
    expect(sessionStoreProblems(state({ MySqlTableName: '' }))).toEqual([]);
    expect(sessionStoreProblems(state({ CacheType: 'MySql', IsSession: false }))).toEqual([]);
    expect(sessionStoreProblems(state({ CacheType: 'MySql', SessionCookieName: ' ' }))).toEqual([]);
  });

  it('refuses empty names and connection strings, and names the database would not take', () => {
    const problems = (values: Record<string, unknown>) =>
      sessionStoreProblems(state({ CacheType: 'MySql', MySqlConnectionString: MYSQL, ...values })).map(
        (p) => `${p.key}: ${p.message}`,
      );
    expect(problems({})).toEqual([]);
    expect(problems({ MySqlTableName: '  ' })).toEqual([
      'MySqlTableName: AppSettings:SessionState:MySqlTableName is empty; CacheType "MySql" needs it',
    ]);
    expect(problems({ MySqlConnectionString: '' })).toEqual([
      'MySqlConnectionString: AppSettings:SessionState:MySqlConnectionString is empty; CacheType "MySql" needs it',
    ]);
    expect(problems({ MySqlSchemaName: 'a.b' })).toEqual([
      'MySqlSchemaName: AppSettings:SessionState:MySqlSchemaName: "a.b" holds a dot; a schema or table name cannot',
    ]);
    // Each rule next to the name it lets through.
    expect(problems({ MySqlTableName: 'x'.repeat(64) })).toEqual([]);
    expect(problems({ MySqlTableName: 'x'.repeat(65) })).toHaveLength(1);
    expect(problems({ MySqlTableName: 'Session Data' })).toEqual([]);
    expect(problems({ MySqlTableName: 'SessionData ' })).toEqual([
      'MySqlTableName: AppSettings:SessionState:MySqlTableName: "SessionData " ends with a space, which MySQL refuses',
    ]);
    expect(problems({ MySqlTableName: 'Session\tData' })).toHaveLength(1);
    const unreadable = problems({ MySqlConnectionString: 'Server=db;Pwd=pw-never-shown;Colour=blue' });
    expect(unreadable).toHaveLength(1);
    expect(unreadable[0]).toMatch(/^MySqlConnectionString: AppSettings:SessionState:MySqlConnectionString: /);
    expect(unreadable[0]).not.toContain('pw-never-shown');
  });

  it('holds PostgreSQL, SQL Server and Redis to their own keys', () => {
    expect(
      sessionStoreProblems(
        state({ CacheType: 'PostgreSql', PostgreSqlConnectionString: 'Host=db', PostgreSqlTableName: '' }),
      ),
    ).toEqual([
      {
        key: 'PostgreSqlTableName',
        message: 'AppSettings:SessionState:PostgreSqlTableName is empty; CacheType "PostgreSql" needs it',
      },
    ]);
    // PostgreSQL cuts a long name itself; SQL Server takes up to 128 characters.
    expect(
      sessionStoreProblems(
        state({ CacheType: 'PostgreSql', PostgreSqlConnectionString: 'Host=db', PostgreSqlTableName: 'x'.repeat(100) }),
      ),
    ).toEqual([]);
    const sqlServer = (table: string) =>
      sessionStoreProblems(
        state({ CacheType: 'SqlServer', SqlServerConnectionString: 'Data Source=db', SqlServerTableName: table }),
      );
    expect(sqlServer('x'.repeat(128))).toEqual([]);
    expect(sqlServer('x'.repeat(129))).toHaveLength(1);
    expect(sessionStoreProblems(state({ CacheType: 'Redis', RedisConnectionString: 'localhost:6379' }))).toEqual([]);
    expect(sessionStoreProblems(state({ CacheType: 'Redis' })).map((p) => p.key)).toEqual(['RedisConnectionString']);
  });
});

import { afterAll, describe, expect, it } from 'vitest';
import { parseSqlServerConnectionString } from '../settings/connection-string.js';
import { SqlSessionStore, sqlServerKnexConnection } from './sql-store.js';

// No SQL Server runs on the development machines or CI: the SqlServer store is verified by the
// statements it sends, rendered by knex's SQL Server dialect, and by the driver options its
// connection string gives (docs/sessions.md says so).
const quiet = { debug() {}, info() {}, warn() {}, error() {}, child: () => quiet };
const connection = sqlServerKnexConnection(
  parseSqlServerConnectionString(
    'Data Source=sql.example,14330;Initial Catalog=App;User ID=ack;Password=p;TrustServerCertificate=True;Encrypt=True',
  ),
);
const store = new SqlSessionStore(
  'SqlServer',
  'sql.example:14330',
  'mssql',
  connection,
  'ack',
  'SessionData',
  60_000,
  quiet,
);
afterAll(() => store.shutdown());

describe('SqlServer session store SQL', () => {
  it('gives tedious the connection string options', () => {
    expect(connection).toMatchObject({
      server: 'sql.example',
      port: 14330,
      database: 'App',
      user: 'ack',
      options: { encrypt: true, trustServerCertificate: true },
    });
  });

  it('creates the configured schema when missing, then the table with its expiry index', () => {
    const [schema, table] = store.createStatements();
    expect(schema).toBe(`if schema_id('ack') is null exec('create schema ' + quotename('ack'))`);
    expect(table).toContain(
      'CREATE TABLE [ack].[SessionData] ([sid] nvarchar(128), [sess] nvarchar(max) not null, [expires] bigint not null, CONSTRAINT [SessionData_pkey] PRIMARY KEY ([sid]))',
    );
    expect(table).toContain('CREATE INDEX [SessionData_expires] ON [ack].[SessionData] ([expires])');
  });

  it('reads only a session that has not expired', () => {
    const q = store.readQuery('abc', 1000).toSQL().toNative();
    expect(q.sql).toBe('select top (@p0) [sess] from [ack].[SessionData] where [sid] = @p1 and [expires] > @p2');
    expect(q.bindings).toEqual([1, 'abc', 1000]);
  });

  it('updates, saves over and touches only a live session, and deletes expired rows', () => {
    expect(store.updateQuery('abc', '{}', 5).toSQL().toNative().sql).toBe(
      'update [ack].[SessionData] set [sess] = @p0, [expires] = @p1 where [sid] = @p2;select @@rowcount',
    );
    // A session read earlier is saved only over a live row: one destroyed meanwhile stays destroyed.
    const live = store.updateLiveQuery('abc', '{}', 9000, 1000).toSQL().toNative();
    expect(live.sql).toBe(
      'update [ack].[SessionData] set [sess] = @p0, [expires] = @p1 where [sid] = @p2 and [expires] > @p3;select @@rowcount',
    );
    expect(live.bindings).toEqual(['{}', 9000, 'abc', 1000]);
    const touch = store.touchQuery('abc', 9000, 1000).toSQL().toNative();
    expect(touch.sql).toBe(
      'update [ack].[SessionData] set [expires] = @p0 where [sid] = @p1 and [expires] > @p2;select @@rowcount',
    );
    expect(touch.bindings).toEqual([9000, 'abc', 1000]);
    expect(store.cleanupQuery(1000).toSQL().toNative().sql).toBe(
      'delete from [ack].[SessionData] where [expires] <= @p0;select @@rowcount',
    );
  });
});

import crypto from 'node:crypto';
import knexFactory, { type Knex } from 'knex';
import { createClient } from 'redis';
import { once } from 'node:events';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { WebSocket } from 'ws';
import type { AckModuleFactory, HostSessions } from '../modules/contract.js';
import {
  makeTestCertificate,
  moduleFiles,
  nodeHttp2Client,
  probeModule,
  testAppSettings,
  useTestHosts,
  testDatabases,
  type TestHost,
} from '../test-support/index.js';

// Against real databases (docs/sessions.md): MariaDB (root, no password), PostgreSQL (postgres,
// trust) and Redis where testDatabases() says (their usual ports, or private servers of the run). Every run uses its
// own schema, table or key prefix, so parallel runs do not collide.
const run = crypto.randomBytes(4).toString('hex');
const hosts = useTestHosts();

async function count(
  url: string,
  cookie?: string,
): Promise<{ count: number; cookie: string | undefined; status: number }> {
  const res = await fetch(`${url}/probe/api/count`, { headers: cookie ? { Cookie: cookie } : {} });
  const body = (await res.json()) as { count: number };
  return { count: body.count, cookie: res.headers.get('set-cookie')?.split(';')[0] ?? cookie, status: res.status };
}

const sidOf = (cookie: string) =>
  decodeURIComponent(cookie.split('=')[1]!)
    .replace(/^s:/, '')
    .replace(/\.[^.]+$/, '');

async function start(sessionState: Record<string, unknown>): Promise<TestHost> {
  const home = hosts.home(
    testAppSettings({
      AppSettings: { LoadModules: ['probe'], SessionState: { IdleTimeoutMinutes: 20, ...sessionState } },
    }),
    moduleFiles(['probe']),
  );
  return hosts.start(home, { probe: probeModule() });
}

interface SqlEngine {
  name: string;
  cacheType: string;
  settings: (schema: string, table: string) => Record<string, unknown>;
  admin: Knex;
  /** Tables of a schema, as the database's catalogue reports them. */
  tables(schema: string): Promise<string[]>;
  dropSchema(schema: string): Promise<void>;
}

const mariadb = knexFactory({
  client: 'mysql2',
  connection: testDatabases().mysqlConnection,
});
const postgres = knexFactory({
  client: 'pg',
  connection: testDatabases().postgresConnection,
});
afterAll(async () => {
  await mariadb.destroy();
  await postgres.destroy();
});

const engines: SqlEngine[] = [
  {
    name: 'MariaDB',
    cacheType: 'MySql',
    settings: (schema, table) => ({
      MySqlConnectionString: testDatabases().mysqlConnectionString,
      MySqlSchemaName: schema,
      MySqlTableName: table,
    }),
    admin: mariadb,
    tables: async (schema) =>
      (
        (await mariadb('information_schema.tables').where('table_schema', schema).select('table_name as t')) as {
          t: string;
        }[]
      ).map((r) => r.t),
    dropSchema: async (schema) => void (await mariadb.raw('drop database if exists ??', [schema])),
  },
  {
    name: 'PostgreSQL',
    cacheType: 'PostgreSql',
    settings: (schema, table) => ({
      PostgreSqlConnectionString: testDatabases().postgresConnectionString,
      PostgreSqlSchemaName: schema,
      PostgreSqlTableName: table,
    }),
    admin: postgres,
    tables: async (schema) =>
      (
        (await postgres('information_schema.tables').where('table_schema', schema).select('table_name as t')) as {
          t: string;
        }[]
      ).map((r) => r.t),
    dropSchema: async (schema) => void (await postgres.raw('drop schema if exists ?? cascade', [schema])),
  },
];

describe.each(engines)('SessionState CacheType for $name', (engine) => {
  it('creates the table in the configured schema; creates, reads, touches, expires and destroys sessions', async () => {
    const schema = `ack_sessions_${run}`;
    const table = `Sessions_${run}`;
    try {
      const { url } = await start({ CacheType: engine.cacheType, ...engine.settings(schema, table) });
      expect(await engine.tables(schema)).toEqual([table]);
      const rows = () => engine.admin.withSchema(schema).table(table);

      // create and read
      const first = await count(url);
      expect(first.count).toBe(1);
      const sid = sidOf(first.cookie!);
      const row = (await rows().where('sid', sid).first()) as { sess: string; expires: string | number };
      expect(JSON.parse(row.sess)).toMatchObject({ count: 1 });
      expect((await count(url, first.cookie)).count).toBe(2);

      // touch: a request that does not change the session still moves its expiry on
      await rows()
        .where('sid', sid)
        .update({ expires: Date.now() + 60_000 });
      const touch = await fetch(`${url}/probe/api/touch`, { headers: { Cookie: first.cookie! } });
      expect(touch.status).toBe(200);
      await vi.waitFor(async () => {
        const after = (await rows().where('sid', sid).first()) as { expires: string | number };
        expect(Number(after.expires)).toBeGreaterThan(Date.now() + 10 * 60_000);
      });

      // expired: the row is still in the table but the session is not returned
      await rows()
        .where('sid', sid)
        .update({ expires: Date.now() - 1000 });
      const fresh = await count(url, first.cookie);
      expect(fresh.count).toBe(1);
      expect(await rows().where('sid', sid).first()).toBeDefined();
    } finally {
      await engine.dropSchema(schema);
    }
  });

  it('deletes expired rows periodically and destroys a session on request', async () => {
    const schema = `ack_sessions_${run}_c`;
    const table = `Sessions_${run}_c`;
    try {
      const t = await start({
        CacheType: engine.cacheType,
        CleanupIntervalSeconds: 1,
        ...engine.settings(schema, table),
      });
      const rows = () => engine.admin.withSchema(schema).table(table);
      const a = await count(t.url);
      const b = await count(t.url);
      await rows()
        .where('sid', sidOf(a.cookie!))
        .update({ expires: Date.now() - 1000 });
      await vi.waitFor(async () => expect(await rows().where('sid', sidOf(a.cookie!)).first()).toBeUndefined(), {
        timeout: 15_000,
        interval: 200,
      });
      expect(await rows().where('sid', sidOf(b.cookie!)).first()).toBeDefined();

      const store = t.host.sessions.sharedStore!;
      await new Promise<void>((resolve, reject) =>
        store.destroy(sidOf(b.cookie!), (err) => (err ? reject(err as Error) : resolve())),
      );
      expect(await rows().where('sid', sidOf(b.cookie!)).first()).toBeUndefined();
      expect((await count(t.url, b.cookie)).count).toBe(1);
    } finally {
      await engine.dropSchema(schema);
    }
  });
});

describe('SessionState CacheType for Redis', () => {
  it('creates, reads, touches, expires (by TTL) and destroys sessions under the configured prefix', async () => {
    const prefix = `ack-test:${run}:`;
    const redis = createClient({ socket: testDatabases().redis });
    await redis.connect();
    try {
      const t = await start({
        CacheType: 'Redis',
        RedisConnectionString: `${testDatabases().redisConnectionString},abortConnect=false`,
        RedisKeyPrefix: prefix,
      });
      const first = await count(t.url);
      const key = prefix + sidOf(first.cookie!);
      expect(JSON.parse((await redis.get(key))!)).toMatchObject({ count: 1 });
      expect((await count(t.url, first.cookie)).count).toBe(2);

      await redis.pExpire(key, 60_000);
      expect((await fetch(`${t.url}/probe/api/touch`, { headers: { Cookie: first.cookie! } })).status).toBe(200);
      await vi.waitFor(async () => expect(await redis.pTTL(key)).toBeGreaterThan(10 * 60_000));

      await redis.pExpire(key, 1);
      await vi.waitFor(async () => expect(await redis.exists(key)).toBe(0));
      const fresh = await count(t.url, first.cookie);
      expect(fresh.count).toBe(1);

      const freshKey = prefix + sidOf(fresh.cookie!);
      expect(await redis.exists(freshKey)).toBe(1);
      await new Promise<void>((resolve, reject) =>
        t.host.sessions.sharedStore!.destroy(sidOf(fresh.cookie!), (err) => (err ? reject(err as Error) : resolve())),
      );
      expect(await redis.exists(freshKey)).toBe(0);
    } finally {
      for (const k of await redis.keys(`${prefix}*`)) await redis.del(k);
      redis.destroy();
    }
  });
});

describe('one session store for every protocol', () => {
  it('HTTP/1.1, HTTP/2 and WebSocket upgrades share one session middleware and store, which modules see as ctx.host.sessions.sharedStore', async () => {
    const prefix = `ack-test:${run}:protocols:`;
    let seen: HostSessions | undefined;
    // Counts in the session over HTTP; its socket greets with the count the upgrade's session holds.
    const counter: AckModuleFactory = (ctx) => {
      seen = ctx.host.sessions;
      const router = ctx.host.createRouter();
      router.get('/count', (req, res) => {
        req.session.count = (req.session.count ?? 0) + 1;
        res.json({ count: req.session.count });
      });
      return {
        routes: [{ mount: '/counter/api', handler: router }],
        upgrades: [
          {
            path: '/counter/socket',
            handler: (socket, req) => socket.send(JSON.stringify({ count: req.session?.count ?? null })),
          },
        ],
      };
    };
    const home = hosts.home(
      testAppSettings({
        AppSettings: {
          LoadModules: ['counter'],
          ServerDevCertFilePath: 'dev.crt',
          ServerDevCertKeyFilePath: 'dev.key',
          SessionState: {
            CacheType: 'Redis',
            RedisConnectionString: testDatabases().redisConnectionString,
            RedisKeyPrefix: prefix,
          },
        },
      }),
      moduleFiles(['counter']),
    );
    makeTestCertificate(home.appDir);
    const redis = createClient({ socket: testDatabases().redis });
    await redis.connect();
    try {
      const t = await hosts.start(home, { counter }, {}, { tlsPort: 0 });
      expect(seen?.sharedStore).toBeDefined();
      expect(seen?.sharedStore).toBe(t.host.sessions.sharedStore);
      expect(seen?.store).toBe(seen?.sharedStore);

      const first = await fetch(`${t.url}/counter/api/count`);
      expect(await first.json()).toEqual({ count: 1 });
      const cookie = first.headers.get('set-cookie')!.split(';')[0]!;

      const h2 = nodeHttp2Client(t.host.tlsUrl);
      const second = await h2.send({ path: '/counter/api/count', headers: { cookie } });
      expect(second.version).toBe('2');
      expect(JSON.parse(second.text)).toEqual({ count: 2 });
      await h2.close();

      for (const base of [t.url.replace(/^http/, 'ws'), t.host.tlsUrl.replace(/^https/, 'wss')]) {
        const socket = new WebSocket(`${base}/counter/socket`, { headers: { cookie }, rejectUnauthorized: false });
        const [greeting] = (await once(socket, 'message')) as [Buffer];
        expect(JSON.parse(greeting.toString())).toEqual({ count: 2 });
        socket.close();
      }

      const stored = await new Promise<unknown>((resolve, reject) =>
        t.host.sessions.sharedStore!.get(sidOf(cookie), (err, data) => (err ? reject(err as Error) : resolve(data))),
      );
      expect(stored).toMatchObject({ count: 2 });
      expect(await redis.exists(prefix + sidOf(cookie))).toBe(1);
    } finally {
      for (const k of await redis.keys(`${prefix}*`)) await redis.del(k);
      redis.destroy();
    }
  });
});

import fs from 'node:fs';
import path from 'node:path';
import { createConnection } from 'mysql2';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  moduleFiles,
  probeModule,
  testAppSettings,
  testDatabases,
  useTestHosts,
  TcpRelay,
  type DatabaseAddress,
  type TestHost,
} from '../test-support/index.js';

// A store that stops answering without closing its connections (a firewall dropping packets, a
// frozen server): the host must answer within `StoreTimeoutSeconds`, not hang (docs/sessions.md).
const hosts = useTestHosts();
const holes: TcpRelay[] = [];
/** A relay to a real database that the test can switch to swallow every byte. */
const holeTo = (target: DatabaseAddress) => {
  const hole = new TcpRelay(target);
  holes.push(hole);
  return hole;
};
afterEach(async () => {
  for (const h of holes.splice(0)) await h.cut();
});

const LOG_SETTINGS = {
  Serilog: {
    WriteTo: [{ Name: 'File', Args: { path: '../log/app.log', outputTemplate: '{Level:u3} {Message:lj}{NewLine}' } }],
  },
};

async function count(t: TestHost, cookie?: string): Promise<Response> {
  // Bounded, so that a hang fails the test instead of stalling it.
  return fetch(`${t.url}/probe/api/count`, {
    headers: cookie ? { Cookie: cookie } : {},
    signal: AbortSignal.timeout(15_000),
  });
}

/**
 * The shared scenario: a session counted through the relay, then the relay swallows; session
 * requests get their 503 within the deadline (one log line for all of them), then the relay
 * forwards again and the same session goes on, without a restart.
 */
async function blackHoleScenario(t: TestHost, hole: TcpRelay, kind: string): Promise<void> {
  const first = await count(t);
  expect(first.status).toBe(200);
  expect(await first.json()).toEqual({ count: 1 });
  const cookie = first.headers.get('set-cookie')!.split(';')[0]!;

  hole.swallow();
  // Without the deadline these hang (20 s to 75 s, until the driver gives up): `count` gives up
  // after 15 s, so a 503 answer is the deadline's.
  const down = await Promise.all([1, 2, 3, 4].map(() => count(t, cookie)));
  for (const res of down) {
    expect(res.status).toBe(503);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.headers.get('retry-after')).toBe('5');
    expect(await res.json()).toMatchObject({ status: 503, code: 'session.store_unavailable' });
  }
  // Static files never touch the store.
  expect((await fetch(`${t.url}/probe-static`)).status).toBe(200);
  const again = await count(t, cookie);
  expect(again.status).toBe(503);

  hole.forward();
  await vi.waitFor(
    async () => {
      const res = await count(t, cookie);
      expect(res.status).toBe(200);
      // The session survived the outage.
      expect(await res.json()).toEqual({ count: 2 });
    },
    { timeout: 20_000, interval: 250 },
  );
  await t.close();
  const log = fs.readFileSync(path.join(t.home.home, 'log', 'app.log'), 'utf8');
  const failed = log.split('\n').filter((l) => l.includes(`session store ${kind} at`) && l.includes('failed'));
  expect(failed).toHaveLength(1);
  expect(failed[0]).toMatch(/^ERR .*did not answer within 1 s/);
  expect(log).toMatch(new RegExp(`session store ${kind} at 127\\.0\\.0\\.1:\\d+ is available again`));
}

describe('a shared session store that stops answering (black hole)', () => {
  it('Redis: 503 with Retry-After within StoreTimeoutSeconds, one log line, recovery without a restart', async () => {
    const hole = holeTo(testDatabases().redis);
    const port = await hole.listen();
    const home = hosts.home(
      testAppSettings({
        AppSettings: {
          LoadModules: ['probe'],
          SessionState: {
            CacheType: 'Redis',
            RedisConnectionString: `127.0.0.1:${port}`,
            RedisKeyPrefix: `ack:deadline:${process.pid}:${Date.now()}:`,
            StoreTimeoutSeconds: 1,
          },
        },
        ...LOG_SETTINGS,
      }),
      moduleFiles(['probe']),
    );
    await blackHoleScenario(await hosts.start(home, { probe: probeModule() }), hole, 'Redis');
  });

  it('MariaDB: 503 with Retry-After within StoreTimeoutSeconds, one log line, recovery without a restart', async () => {
    const hole = holeTo(testDatabases().mysql);
    const port = await hole.listen();
    const table = `Deadline_${process.pid}_${Date.now()}`;
    const home = hosts.home(
      testAppSettings({
        AppSettings: {
          LoadModules: ['probe'],
          SessionState: {
            CacheType: 'MySql',
            MySqlConnectionString: `Server=127.0.0.1;Port=${port};Database=test;Uid=root;Pwd=;`,
            MySqlSchemaName: 'test',
            MySqlTableName: table,
            StoreTimeoutSeconds: 1,
          },
        },
        ...LOG_SETTINGS,
      }),
      moduleFiles(['probe']),
    );
    try {
      await blackHoleScenario(await hosts.start(home, { probe: probeModule() }), hole, 'MySql');
    } finally {
      const admin = createConnection(testDatabases().mysqlConnection);
      await admin.promise().query(`drop table if exists \`${table}\``);
      await admin.promise().end();
    }
  });
});

describe('a shared session store that answers slowly, within the deadline', () => {
  it('serves the session (200) and logs no failure', async () => {
    const hole = holeTo(testDatabases().redis);
    const port = await hole.listen();
    const home = hosts.home(
      testAppSettings({
        AppSettings: {
          LoadModules: ['probe'],
          SessionState: {
            CacheType: 'Redis',
            RedisConnectionString: `127.0.0.1:${port}`,
            RedisKeyPrefix: `ack:slow:${process.pid}:${Date.now()}:`,
            StoreTimeoutSeconds: 1,
          },
        },
        ...LOG_SETTINGS,
      }),
      moduleFiles(['probe']),
    );
    const t = await hosts.start(home, { probe: probeModule() });
    const first = await count(t);
    const cookie = first.headers.get('set-cookie')!.split(';')[0]!;
    expect(await first.json()).toEqual({ count: 1 });
    hole.slow(300); // 0.6 s for the round trip of each call: late, but within the 1 s deadline
    const started = Date.now();
    const res = await count(t, cookie);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ count: 2 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(600);
    await t.close();
    expect(fs.readFileSync(path.join(home.home, 'log', 'app.log'), 'utf8')).not.toMatch(/session store .* failed/);
  });
});

describe('the SQL driver while the store fails', () => {
  it('writes nothing to stdout: what knex has to say about failed connections goes to the host log', async () => {
    const hole = holeTo(testDatabases().mysql);
    const port = await hole.listen();
    const table = `Quiet_${process.pid}_${Date.now()}`;
    const home = hosts.home(
      testAppSettings({
        AppSettings: {
          LoadModules: ['probe'],
          SessionState: {
            CacheType: 'MySql',
            MySqlConnectionString: `Server=127.0.0.1;Port=${port};Database=test;Uid=root;Pwd=;`,
            MySqlSchemaName: 'test',
            MySqlTableName: table,
            StoreTimeoutSeconds: 1,
          },
        },
        Serilog: {
          MinimumLevel: { Default: 'Debug' },
          WriteTo: [
            { Name: 'File', Args: { path: '../log/app.log', outputTemplate: '{Level:u3} {Message:lj}{NewLine}' } },
          ],
        },
      }),
      moduleFiles(['probe']),
    );
    // The host logs to its file only (quiet), so anything on the console came from elsewhere.
    const written: string[] = [];
    const spies = [
      ...(['log', 'info', 'warn', 'error', 'debug'] as const).map((name) =>
        vi.spyOn(console, name).mockImplementation((...args: unknown[]) => void written.push(args.join(' '))),
      ),
      vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
        written.push(String(chunk));
        return true;
      }),
    ];
    try {
      const t = await hosts.start(home, { probe: probeModule() });
      const first = await count(t);
      expect(first.status).toBe(200);
      const cookie = first.headers.get('set-cookie')!.split(';')[0]!;
      // The pool's connections break under it (the server restarted), then it stops answering.
      hole.reset();
      await vi.waitFor(async () => expect((await count(t, cookie)).status).toBe(200), {
        timeout: 20_000,
        interval: 100,
      });
      hole.swallow();
      expect((await count(t, cookie)).status).toBe(503);
      hole.forward();
      await vi.waitFor(async () => expect((await count(t, cookie)).status).toBe(200), {
        timeout: 20_000,
        interval: 250,
      });
      await t.close();
    } finally {
      for (const spy of spies) spy.mockRestore();
      const admin = createConnection(testDatabases().mysqlConnection);
      await admin.promise().query(`drop table if exists \`${table}\``);
      await admin.promise().end();
    }
    expect(written).toEqual([]);
    const log = fs.readFileSync(path.join(home.home, 'log', 'app.log'), 'utf8');
    expect(log).toMatch(/^DBG knex: Connection Error: /m);
  });
});

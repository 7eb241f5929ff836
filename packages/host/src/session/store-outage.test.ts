import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { createConnection } from 'mysql2';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createHost } from '../host.js';
import {
  freePort,
  moduleFiles,
  probeModule,
  testAppSettings,
  testDatabases,
  useTestHosts,
  TcpRelay,
} from '../test-support/index.js';

// A private redis-server on a free port stands for "the database": it is stopped and started
// again while the host runs, which the shared services other runs use must never be.
const hosts = useTestHosts();
const PASSWORD = 'hunter22-outage';
const servers: ChildProcess[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) if (s.exitCode === null && s.signalCode === null) await stop(s);
});

async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--requirepass', PASSWORD],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  servers.push(child);
  let out = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('Ready to accept connections')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`redis-server exited (${code}): ${out}`)));
  });
  return child;
}

async function stop(child: ChildProcess): Promise<void> {
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}

describe('a shared session store that goes away', () => {
  it('answers 503 problems for session requests while it is down, keeps serving static files, and recovers without a restart', async () => {
    const port = await freePort();
    const redis = await startRedis(port);
    const home = hosts.home(
      testAppSettings({
        AppSettings: {
          LoadModules: ['probe'],
          SessionState: { CacheType: 'Redis', RedisConnectionString: `127.0.0.1:${port},password=${PASSWORD}` },
        },
        Serilog: {
          WriteTo: [
            { Name: 'File', Args: { path: '../log/app.log', outputTemplate: '{Level:u3} {Message:lj}{NewLine}' } },
          ],
        },
      }),
      moduleFiles(['probe']),
    );
    const t = await hosts.start(home, { probe: probeModule() });
    const first = await fetch(`${t.url}/probe/api/count`);
    expect(first.status).toBe(200);
    // The body's end follows the session's save: read it before the database goes.
    expect(await first.json()).toEqual({ count: 1 });
    const cookie = first.headers.get('set-cookie')!.split(';')[0]!;

    await stop(redis);
    const down = await fetch(`${t.url}/probe/api/count`, { headers: { Cookie: cookie } });
    expect(down.status).toBe(503);
    expect(down.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await down.json()).toMatchObject({ status: 503, code: 'session.store_unavailable' });
    const staticFile = await fetch(`${t.url}/probe-static`, { headers: { Cookie: cookie } });
    expect(staticFile.status).toBe(200);
    expect(await staticFile.text()).toBe('static:probe');

    await startRedis(port);
    await vi.waitFor(
      async () => {
        const res = await fetch(`${t.url}/probe/api/count`, { headers: { Cookie: cookie } });
        expect(res.status).toBe(200);
      },
      { timeout: 20_000, interval: 250 },
    );
    await t.close();
    const log = fs.readFileSync(path.join(home.home, 'log', 'app.log'), 'utf8');
    expect(log).toMatch(/session store Redis at 127\.0\.0\.1:\d+ failed/);
    expect(log).toMatch(/session store Redis at 127\.0\.0\.1:\d+ is available again/);
    expect(log).not.toContain(PASSWORD);
  });

  it('recovers a SQL store (MariaDB behind a TCP relay the test cuts) without a restart', async () => {
    const relay = new TcpRelay(testDatabases().mysql);
    const port = await relay.listen(0);
    const table = `Outage_${process.pid}_${Date.now()}`;
    const home = hosts.home(
      testAppSettings({
        AppSettings: {
          LoadModules: ['probe'],
          SessionState: {
            CacheType: 'MySql',
            MySqlConnectionString: `Server=127.0.0.1;Port=${port};Database=test;Uid=root;Pwd=;`,
            MySqlSchemaName: 'test',
            MySqlTableName: table,
          },
        },
      }),
      moduleFiles(['probe']),
    );
    const t = await hosts.start(home, { probe: probeModule() });
    try {
      const first = await fetch(`${t.url}/probe/api/count`);
      expect(first.status).toBe(200);
      expect(await first.json()).toEqual({ count: 1 });
      const cookie = first.headers.get('set-cookie')!.split(';')[0]!;
      await relay.cut();
      const down = await fetch(`${t.url}/probe/api/count`, { headers: { Cookie: cookie } });
      expect(down.status).toBe(503);
      expect(await down.json()).toMatchObject({ code: 'session.store_unavailable' });
      expect((await fetch(`${t.url}/probe-static`)).status).toBe(200);
      await relay.listen(port);
      await vi.waitFor(
        async () => {
          const res = await fetch(`${t.url}/probe/api/count`, { headers: { Cookie: cookie } });
          expect(res.status).toBe(200);
          // The row survived the outage: the session goes on where it was.
          expect(await res.json()).toEqual({ count: 2 });
        },
        { timeout: 20_000, interval: 250 },
      );
    } finally {
      await t.close();
      await relay.cut();
      const admin = createConnection(testDatabases().mysqlConnection);
      await admin.promise().query(`drop table if exists \`${table}\``);
      await admin.promise().end();
    }
  });

  it('stops start-up after a bounded wait with a message that names the store and not the password', async () => {
    const port = await freePort();
    const home = hosts.home(
      testAppSettings({
        AppSettings: {
          SessionState: {
            CacheType: 'MySql',
            StoreStartupWaitSeconds: 1,
            MySqlConnectionString: `Server=127.0.0.1;Port=${port};Database=test;Uid=root;Pwd=${PASSWORD};`,
          },
        },
      }),
    );
    const attempt = createHost({ appDir: home.appDir, modules: {}, env: {}, logging: { quiet: true } });
    await expect(attempt).rejects.toThrow(
      new RegExp(`^session store MySql at 127\\.0\\.0\\.1:${port} is not reachable after 1 s: .*ECONNREFUSED`),
    );
    await expect(attempt).rejects.not.toThrow(PASSWORD);
  });
});

import { spawn } from 'node:child_process';
import http from 'node:http';
import type net from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort, testDatabases, useTestHosts, waitFor } from '@ack/host/test-support';
import { useCleanups } from '../test-support/cleanups.js';
import { ACK_BIN, runAck } from '../test-support/spawn-ack.js';

// A session store that is down: `ack serve` says at once what it waits for, and `ack check
// --connect` tries the store and the modules' addresses (`ack check` alone reads settings only).
// The BUILT `ack` binary (`pnpm build` first).

const hosts = useTestHosts();
const cleanups = useCleanups();

function home(sessionState: object, businessServerUrl?: string) {
  return hosts.home(
    {
      AppSettings: {
        LoadModules: ['wwwroot'],
        SessionState: { IsSession: true, SessionCookieName: 'ack.Session', ...sessionState },
      },
      Serilog: { WriteTo: [{ Name: 'Console' }] },
    },
    {
      'modules/wwwroot/module.json': {
        ModuleID: 'wwwroot',
        ModuleConfig: businessServerUrl === undefined ? {} : { BusinessServerUrl: businessServerUrl },
      },
      'modules/wwwroot/wwwroot/index.html': '<h1>home</h1>',
    },
  );
}

async function listening(): Promise<string> {
  const server = http.createServer((_req, res) => res.end('ok'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise<void>((r) => server.close(() => r())));
  return `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/transact/api/transaction/execute`;
}

describe('ack check --connect', () => {
  it('a store that is down: one line naming it, its setting and the reason; exit 1 (ack check alone passes)', async () => {
    const port = await freePort();
    const h = home(
      { CacheType: 'MySql', MySqlConnectionString: `Server=127.0.0.1;Port=${port};Uid=root;Pwd=secret-pw;` },
      await listening(),
    );
    const plain = await runAck(['check', '--app-dir', h.appDir]);
    expect(plain.code).toBe(0);
    const run = await runAck(['check', '--app-dir', h.appDir, '--connect']);
    expect(run.code).toBe(1);
    const lines = run.stderr.trim().split('\n');
    expect(lines).toContain(
      `connect failed: session store MySql 127.0.0.1:${port} (AppSettings:SessionState:MySqlConnectionString): cannot connect to 127.0.0.1:${port} (ECONNREFUSED)`,
    );
    expect(lines.at(-1)).toBe(`${h.appDir}/appsettings.json: settings ok, but 1 of 2 address(es) could not be reached`);
    expect(run.stdout + run.stderr).not.toContain('secret-pw');
    const json = JSON.parse((await runAck(['check', '--app-dir', h.appDir, '--connect', '--json'])).stdout);
    expect(json.ok).toBe(false);
    expect(json.connect.map((t: { result: string }) => t.result)).toEqual(['failed', 'ok']);
  });

  it('its neighbour: a store and a BusinessServerUrl that answer: a line each, exit 0; the host itself is not tried', async () => {
    const url = await listening();
    const h = home({ CacheType: 'Redis', RedisConnectionString: testDatabases().redisConnectionString }, url);
    const run = await runAck(['check', '--app-dir', h.appDir, '--connect']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const { host, port } = testDatabases().redis;
    expect(run.stdout).toContain(
      `connect ok: session store Redis ${host}:${port} (AppSettings:SessionState:RedisConnectionString)\n`,
    );
    expect(run.stdout).toContain(
      `connect ok: BusinessServerUrl ${url} (BusinessServerUrl (wwwroot, else AppSettings))\n`,
    );
    const self = home({ CacheType: 'Memory' });
    const own = await runAck(['check', '--app-dir', self.appDir, '--connect']);
    expect(own.code).toBe(0);
    expect(own.stdout).toContain(
      'connect skipped: BusinessServerUrl http://localhost:8421/transact/api/transaction/execute (BusinessServerUrl (wwwroot, else AppSettings)): this host itself (AppSettings:ServerPort): it answers once ack serve runs',
    );
  });
});

describe('ack serve with the session store down', () => {
  it('says at once what it waits for and for how long, while it waits', async () => {
    const port = await freePort();
    const h = home({
      CacheType: 'MySql',
      MySqlConnectionString: `Server=127.0.0.1;Port=${port};Uid=root;Pwd=secret-pw;`,
      StoreStartupWaitSeconds: 120,
    });
    const child = spawn(process.execPath, [ACK_BIN, 'serve', '--app-dir', h.appDir, '--port', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    cleanups.push(() => void child.kill('SIGKILL'));
    // Well before the 120 s wait is over: the line comes while the host is still waiting.
    await waitFor(() => output.includes('waiting for the session store'), {
      timeout: 30_000,
      message: () => `the waiting line; output so far:\n${output}`,
    });
    expect(child.exitCode).toBe(null);
    expect(output).toContain(
      `waiting for the session store MySql at 127.0.0.1:${port}, up to 120 s (AppSettings:SessionState:StoreStartupWaitSeconds): `,
    );
    expect(output).not.toContain('secret-pw');
  }, 60_000);
});

import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { once } from 'node:events';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isTemporaryFileName } from '@ack/host/serving';
import { WebSocket } from 'ws';
import { useTestHosts, waitFor, type TestHome } from '@ack/host/test-support';
import { runAck, startAckServe } from '../test-support/spawn-ack.js';

let home: TestHome | undefined;
const hosts = useTestHosts();

const consoleOnly = { WriteTo: [{ Name: 'Console', Args: {} }] };

function slowModuleHome(): TestHome {
  return hosts.home(
    { AppSettings: { LoadModules: ['slow'] }, Serilog: consoleOnly },
    {
      'modules/slow/module.json': { ModuleID: 'slow', EntryPoint: './index.mjs' },
      'modules/slow/index.mjs': `export default (ctx) => {
      const r = ctx.host.createRouter();
      r.get('/', (req, res) => {
        ctx.logger.info('slow request started');
        setTimeout(() => res.json({ done: true }), Number(req.query.ms ?? 800));
      });
      return { routes: [{ mount: '/slow/api', handler: r }], close() { ctx.logger.info('slow module closed'); } };
    };`,
    },
  );
}

describe('ack serve', () => {
  it('finishes a request in flight across SIGTERM, closes modules and exits 0', async () => {
    home = slowModuleHome();
    const served = await startAckServe(['--app-dir', home.appDir, '--port', '0', '--host', '127.0.0.1']);
    const inFlight = fetch(`${served.url}/slow/api?ms=800`);
    await waitFor(() => served.output().includes('slow request started'), {
      message: () => `the request to reach the module; output so far:\n${served.output()}`,
    });
    served.child.kill('SIGTERM');
    const res = await inFlight;
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ done: true });
    expect(await served.exited).toBe(0);
    expect(served.output()).toMatch(/SIGTERM: stopping/);
    expect(served.output()).toMatch(/slow module closed/);
    await expect(fetch(`${served.url}/slow/api?ms=1`)).rejects.toThrow();
  });

  it('on SIGTERM during a large upload, removes its staged file, keeps the old one and exits 0', async () => {
    home = hosts.home(
      {
        AppSettings: {
          LoadModules: [],
          UseContractSync: true,
          HostAccessID: 'team-key',
          Security: { MaxContractSyncFileBytes: 50_000_000 },
        },
        Serilog: consoleOnly,
      },
      {
        'modules/HDS/Contracts/transact/HDS/old.json': 'old module copy',
        'contracts/transact/HDS/old.json': 'old shared copy',
      },
    );
    const temps = () =>
      (fs.readdirSync(home!.home, { recursive: true, encoding: 'utf8' }) as string[]).filter((f) =>
        isTemporaryFileName(path.basename(f)),
      );
    const served = await startAckServe(['--app-dir', home.appDir, '--port', '0', '--host', '127.0.0.1']);
    const boundary = 'sigtermboundary';
    const fields = Object.entries({
      moduleID: 'HDS',
      contractType: 'transact',
      destFilePath: 'HDS/old.json',
      changeType: 'Changed',
    })
      .map(([n, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${n}"\r\n\r\n${v}\r\n`)
      .join('');
    const socket = net.connect(Number(new URL(served.url).port), '127.0.0.1');
    socket.on('error', () => undefined);
    await new Promise((r) => socket.once('connect', r));
    // Announces 25 MB, sends 2 MB, then stalls: a large upload in flight.
    socket.write(
      `POST /contractsync HTTP/1.1\r\nHost: x\r\nhostAccessID: ${createHash('sha256').update('team-key').digest('hex')}\r\n` +
        `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: 25000000\r\n\r\n${fields}` +
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="old.json"\r\n\r\n`,
    );
    socket.write(Buffer.alloc(2_000_000, 0x7a));
    await waitFor(() => temps().length > 0, { message: 'the upload to be staged in a temporary file' });
    expect(temps()).toHaveLength(1);
    served.child.kill('SIGTERM');
    expect(await served.exited).toBe(0);
    socket.destroy();
    expect(temps()).toEqual([]);
    expect(fs.readFileSync(path.join(home.home, 'modules/HDS/Contracts/transact/HDS/old.json'), 'utf8')).toBe(
      'old module copy',
    );
    expect(fs.readFileSync(path.join(home.home, 'contracts/transact/HDS/old.json'), 'utf8')).toBe('old shared copy');
  });

  it('closes every open WebSocket with 1001 (going away) on SIGTERM, then exits 0', async () => {
    home = hosts.home(
      { AppSettings: { LoadModules: ['wwwroot'], RunningEnvironment: 'D' }, Serilog: consoleOnly },
      {
        'modules/wwwroot/module.json': { ModuleID: 'wwwroot', ModuleConfig: { IsEnabledLiveReload: true } },
      },
    );
    const served = await startAckServe(['--app-dir', home.appDir, '--port', '0', '--host', '127.0.0.1']);
    const sockets = [0, 1].map(() => new WebSocket(`${served.url.replace(/^http/, 'ws')}/wwwroot/api/live-reload`));
    await Promise.all(sockets.map((s) => once(s, 'open')));
    const codes = Promise.all(sockets.map(async (s) => ((await once(s, 'close')) as [number])[0]));
    served.child.kill('SIGTERM');
    expect(await codes).toEqual([1001, 1001]);
    expect(await served.exited).toBe(0);
  });

  it('logs version, entry base path, URL and modules loaded and skipped at start', async () => {
    home = hosts.home(
      { AppSettings: { LoadModules: ['wwwroot', 'transact'] }, Serilog: consoleOnly },
      {
        'modules/wwwroot/module.json': { ModuleID: 'wwwroot', ModuleConfig: {} },
      },
    );
    const served = await startAckServe(['--app-dir', home.appDir, '--port', '0', '--host', '127.0.0.1']);
    // The start-up lines may follow the one that names the URL.
    await waitFor(() => /modules loaded/.test(served.output()), {
      message: () => `the start-up lines; output so far:\n${served.output()}`,
    });
    served.child.kill('SIGINT');
    expect(await served.exited).toBe(0);
    const out = served.output();
    expect(out).toMatch(/ack \d+\.\d+\.\d+ on Node v\d+/);
    expect(out).toContain(`entry base path ${home.appDir}`);
    expect(out).toMatch(/modules loaded: wwwroot; skipped: transact/);
    expect(out).toMatch(/module transact skipped: no folder/);
  });

  it('says in one line that the port is in use and exits 1', async () => {
    home = hosts.home({ AppSettings: { LoadModules: [] }, Serilog: consoleOnly });
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      const run = await runAck(['serve', '--app-dir', home.appDir, '--port', String(port), '--host', '127.0.0.1']);
      expect(run.code).toBe(1);
      expect(run.stderr.trim().split('\n')).toEqual([
        `ack: port ${port} is already in use (127.0.0.1:${port}); choose another with --port`,
      ]);
    } finally {
      blocker.close();
    }
  });

  it('names the option or setting that chose the port in use: --https-port, ServerPort, a Kestrel endpoint', async () => {
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    const taken = (blocker.address() as net.AddressInfo).port;
    const inUse = `port ${taken} is already in use (127.0.0.1:${taken}); choose another with`;
    try {
      home = hosts.home({ AppSettings: { LoadModules: [] }, Serilog: consoleOnly });
      const https = await runAck(
        ['serve', '--app-dir', home.appDir, '--port', '0', '--https-port', String(taken), '--host', '127.0.0.1'],
        { env: { AppSettings__RunningEnvironment: 'D' } },
      );
      expect(https.code).toBe(1);
      expect(https.stderr.trim().split('\n').at(-1)).toBe(`ack: ${inUse} --https-port`);
      const fromSettings = await runAck(['serve', '--app-dir', home.appDir, '--host', '127.0.0.1'], {
        env: { AppSettings__ServerPort: String(taken) },
      });
      expect(fromSettings.code).toBe(1);
      expect(fromSettings.stderr.trim()).toBe(`ack: ${inUse} AppSettings:ServerPort (or --port)`);
      const endpoint = await runAck(['serve', '--app-dir', home.appDir, '--port', '0', '--host', '127.0.0.1'], {
        env: { Kestrel__Endpoints__Api__Url: `http://127.0.0.1:${taken}` },
      });
      expect(endpoint.code).toBe(1);
      expect(endpoint.stderr.trim()).toBe(`ack: ${inUse} Kestrel:Endpoints:Api:Url`);
    } finally {
      blocker.close();
    }
  });

  it('exits 2 with a usage message for a bad option value', async () => {
    const run = await runAck(['serve', '--port', 'eighty']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/port number/);
  });
});

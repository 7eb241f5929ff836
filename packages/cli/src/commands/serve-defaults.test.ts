import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { useTestHosts, waitFor } from '@ack/host/test-support';
import { startAckServe, type ServingAck } from '../test-support/spawn-ack.js';

const hosts = useTestHosts();
const running: ServingAck[] = [];
const folders: string[] = [];
afterEach(async () => {
  for (const s of running.splice(0)) {
    s.child.kill('SIGTERM');
    await s.exited;
  }
  for (const f of folders.splice(0)) fs.rmSync(f, { recursive: true, force: true });
});

async function serve(args: string[]): Promise<ServingAck> {
  const s = await startAckServe(args);
  running.push(s);
  return s;
}

/** This machine's first non-loopback IPv4 address, if it has one. */
const outsideAddress = Object.values(os.networkInterfaces())
  .flat()
  .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;

function connects(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, host, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
    socket.setTimeout(3000, () => {
      socket.destroy();
      resolve(false);
    });
  });
}

const consoleOnly = { WriteTo: [{ Name: 'Console' }] };

describe('ack serve binds to loopback by default', () => {
  it('listens on 127.0.0.1 without --host, and says so', async () => {
    const home = hosts.home({ AppSettings: { LoadModules: [] }, Serilog: consoleOnly });
    const s = await serve(['--app-dir', home.appDir, '--port', '0']);
    const port = Number(new URL(s.url).port);
    expect(s.url).toBe(`http://127.0.0.1:${port}`);
    expect(s.output()).toContain(
      `listening on http://127.0.0.1:${port} (this machine only; --host 0.0.0.0 to open it)`,
    );
    expect(await connects('127.0.0.1', port)).toBe(true);
    if (outsideAddress) expect(await connects(outsideAddress, port)).toBe(false);
  });

  it('opens every interface with --host 0.0.0.0 or AppSettings:ServerListenAddress "*"', async () => {
    const home = hosts.home({ AppSettings: { LoadModules: [], ServerListenAddress: '*' }, Serilog: consoleOnly });
    const s = await serve(['--app-dir', home.appDir, '--port', '0']);
    const port = Number(new URL(s.url).port);
    expect(s.output()).toContain(`(all interfaces, port ${port})`);
    if (outsideAddress) expect(await connects(outsideAddress, port)).toBe(true);
    const flag = await serve(['--app-dir', home.appDir, '--port', '0', '--host', '0.0.0.0']);
    expect(flag.output()).toMatch(/\(all interfaces, port \d+\)/);
  });
});

describe('the loopback default and TLS listeners', () => {
  it('binds the --https-port listener to loopback too, while a Kestrel endpoint keeps the address its URL names', async () => {
    const home = hosts.home({
      AppSettings: { LoadModules: [], RunningEnvironment: 'D' },
      Kestrel: { Endpoints: { Everywhere: { Url: 'http://0.0.0.0:0' } } },
      Serilog: consoleOnly,
    });
    const s = await serve(['--app-dir', home.appDir, '--port', '0', '--https-port', '0']);
    const tls = /endpoint Https on (https:\/\/\S+) /.exec(s.output())?.[1];
    const everywhere = /endpoint Everywhere on (http:\/\/\S+) /.exec(s.output())?.[1];
    expect(tls).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(everywhere).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const tlsPort = Number(new URL(tls!).port);
    const endpointPort = Number(new URL(everywhere!).port);
    expect(await connects('127.0.0.1', tlsPort)).toBe(true);
    expect(await connects('127.0.0.1', endpointPort)).toBe(true);
    if (outsideAddress) {
      expect(await connects(outsideAddress, tlsPort)).toBe(false);
      expect(await connects(outsideAddress, endpointPort)).toBe(true);
    }
  });
});

describe('ack serve DIR', () => {
  it('serves a plain folder as a static root with zero configuration, writing nothing into it', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-plain-'));
    folders.push(dir);
    fs.writeFileSync(path.join(dir, 'index.html'), '<h1>plain</h1>');
    fs.mkdirSync(path.join(dir, 'css'));
    fs.writeFileSync(path.join(dir, 'css', 'site.css'), 'body{}');
    const before = fs.readdirSync(dir, { recursive: true }).sort();
    const s = await serve([dir, '--port', '0']);
    expect(await (await fetch(`${s.url}/`)).text()).toBe('<h1>plain</h1>');
    const css = await fetch(`${s.url}/css/site.css`);
    expect(css.headers.get('content-type')).toMatch(/^text\/css/);
    expect(await css.text()).toBe('body{}');
    expect((await fetch(`${s.url}/missing.html`)).status).toBe(404);
    expect(s.output()).toContain(`serving the folder ${dir} as a static root`);
    // The console shows which module each line comes from.
    expect(s.output()).toMatch(/^\[\d{2}:\d{2}:\d{2} INF\] host: listening on /m);
    // Nothing about the throw-away home behind it: no wwwroot start-up line (the transaction
    // wrapper's AuthorizationKey, contract screens, shared files), no entry base path, no warning.
    await waitFor(() => /listening on/.test(s.output()));
    expect(s.output()).not.toMatch(/wwwroot: |AuthorizationKey|entry base path|modules loaded|WRN|ERR/);
    expect(fs.readdirSync(dir, { recursive: true }).sort()).toEqual(before);
  });

  it('takes an application home given as DIR (its app/ folder found)', async () => {
    const home = hosts.home(
      { AppSettings: { LoadModules: ['wwwroot'] }, Serilog: consoleOnly },
      {
        'modules/wwwroot/module.json': { ModuleID: 'wwwroot' },
        'modules/wwwroot/wwwroot/index.html': 'home page',
      },
    );
    const s = await serve([home.home, '--port', '0']);
    expect(await (await fetch(`${s.url}/`)).text()).toBe('home page');
    expect(s.output()).not.toContain('as a static root');
  });
});

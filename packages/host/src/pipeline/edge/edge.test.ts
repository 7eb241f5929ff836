import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  makeTestCertificate,
  moduleFiles,
  nodeHttp2Client,
  probeModule,
  rawConnection,
  testAppSettings,
  useTestHosts,
} from '../../test-support/index.js';

const hosts = useTestHosts();
const clients: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
});

async function start(settings: Record<string, unknown> = {}, appSettings: Record<string, unknown> = {}, tls = false) {
  const certificate = tls ? { ServerDevCertFilePath: 'dev.crt', ServerDevCertKeyFilePath: 'dev.key' } : {};
  const home = hosts.home(
    testAppSettings({ AppSettings: { LoadModules: ['probe'], ...certificate, ...appSettings }, ...settings }),
    moduleFiles(['probe']),
  );
  if (tls) makeTestCertificate(home.appDir);
  return hosts.start(home, { probe: probeModule() }, {}, tls ? { tlsPort: 0 } : {});
}

async function send(url: string, text: string, options: { localAddress?: string } = {}): Promise<string> {
  const c = await rawConnection(url, options);
  c.write(text);
  await c.closedWithin(10_000);
  return c.text;
}

describe('HTTP conformance at the edge', () => {
  it('accepts absolute-form request targets and routes them by their path (RFC 9112 3.2.2)', async () => {
    const { url } = await start();
    const pub = await send(
      url,
      'GET http://127.0.0.1/probe-public HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n',
    );
    expect(pub).toMatch(/^HTTP\/1\.1 200/);
    expect(pub).toContain('public:probe');
    const route = await send(
      url,
      'GET HTTP://127.0.0.1:9/probe/api/whoami?x=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n',
    );
    expect(route).toMatch(/^HTTP\/1\.1 200/);
    expect(route).toContain('"clientIp":"127.0.0.1"');
    const root = await send(url, 'GET http://127.0.0.1 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    expect(root).toMatch(/^HTTP\/1\.1 404/);
  });

  it('refuses two Host headers with 400', async () => {
    const { url } = await start();
    const reply = await send(
      url,
      'GET /probe-public HTTP/1.1\r\nHost: 127.0.0.1\r\nhost: evil.example\r\nConnection: close\r\n\r\n',
    );
    expect(reply).toMatch(/^HTTP\/1\.1 400/);
    expect(reply).toContain('request.duplicate_host');
  });

  it('answers only the hosts AllowedHosts names (DNS rebinding), any host by default', async () => {
    const { url } = await start({ AllowedHosts: 'localhost; *.example.com' });
    const get = (host: string) => send(url, `GET /probe-public HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
    for (const host of ['localhost', 'LOCALHOST:8421', 'a.example.com', 'b.a.example.com:1'])
      expect(await get(host), host).toMatch(/^HTTP\/1\.1 200/);
    for (const host of ['rebound.attacker.test', 'example.com', '127.0.0.1', 'localhost.attacker.test']) {
      const reply = await get(host);
      expect(reply, host).toMatch(/^HTTP\/1\.1 400/);
      expect(reply, host).toContain('request.host_not_allowed');
    }
    // The authority of an absolute-form target is the host that counts.
    expect(
      await send(url, 'GET http://evil.test/probe-public HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'),
    ).toMatch(/^HTTP\/1\.1 400/);
    const open = await start();
    expect((await fetch(`${open.url}/probe-public`, { headers: { host: 'anything.test' } })).status).toBe(200);
  });

  it('applies AllowedHosts to HTTP/2 requests by their :authority', async () => {
    const { host } = await start({ AllowedHosts: 'localhost' }, {}, true);
    const client = nodeHttp2Client(host.tlsUrl);
    clients.push(client);
    expect((await client.send({ path: '/probe-public', headers: { ':authority': 'localhost:8443' } })).status).toBe(
      200,
    );
    const refused = await client.send({ path: '/probe-public', headers: { ':authority': 'rebound.attacker.test' } });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('request.host_not_allowed');
  });

  it('throttles repeated failed hostAccessID checks per client address with 429 + Retry-After, and collapses their log lines', async () => {
    const t = await start(
      { Serilog: { WriteTo: [{ Name: 'File', Args: { path: '../log/host.log' } }] } },
      {
        UseContractSync: true,
        HostAccessID: 'the-real-access-id',
        Security: { MaxFailedAccessChecks: 3, FailedAccessCheckWindow: '00:10:00' },
      },
    );
    const sync = (id: string, localAddress = '127.0.0.1') =>
      send(
        t.url,
        `POST /contractsync HTTP/1.1\r\nHost: x\r\nhostAccessID: ${id}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
        { localAddress },
      );
    for (let i = 0; i < 3; i++) expect(await sync(`wrong-${i}`)).toMatch(/^HTTP\/1\.1 401/);
    for (let i = 0; i < 5; i++) {
      const reply = await sync('wrong-again');
      expect(reply).toMatch(/^HTTP\/1\.1 429/);
      expect(reply).toMatch(/\r\nRetry-After: \d+\r\n/i);
    }
    // Blocked means blocked: even the right id waits.
    expect(await sync('the-real-access-id')).toMatch(/^HTTP\/1\.1 429/);
    // Another address is not affected (the right id gets past the check, to the form's 415).
    expect(await sync('the-real-access-id', '127.0.0.2')).toMatch(/^HTTP\/1\.1 415/);
    await t.close();
    const log = fs.readFileSync(path.join(t.home.home, 'log', 'host.log'), 'utf8');
    const lines = log.split('\n').filter((l) => l.includes('hostAccessID') || l.includes('failed access checks'));
    expect(lines.length, log).toBe(2);
    expect(lines[1]).toMatch(/3 failed access checks from 127\.0\.0\.1 .*6 refused with 429/);
  });
});

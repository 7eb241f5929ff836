import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createHost } from '../host.js';
import {
  freePort,
  makeTestCertificate,
  moduleFiles,
  nodeHttp2Client,
  probeModule,
  startRedisServer,
  testAppSettings,
  useTestHosts,
} from '../test-support/index.js';

// The liveness and readiness URLs (docs/operations.md "Health"), over real sockets: each state the
// readiness URL reports, the event-loop check of liveness, and the paths next to them that are not
// health URLs.
const hosts = useTestHosts();
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function get(url: string, init: RequestInit = {}) {
  const res = await fetch(url, init);
  const text = await res.text();
  const json = /json/.test(res.headers.get('content-type') ?? '');
  return {
    status: res.status,
    headers: res.headers,
    text,
    body: json && text ? (JSON.parse(text) as unknown) : undefined,
  };
}

async function startHost(appSettings: Record<string, unknown> = {}, files: Record<string, object | string> = {}) {
  const home = hosts.home(testAppSettings({ AppSettings: { LoadModules: ['probe'], ...appSettings } }), {
    ...moduleFiles(['probe']),
    ...files,
  });
  return hosts.start(home, { probe: probeModule() });
}

describe('health URLs', () => {
  it('answer 200 with a small JSON body, no-store, to GET and HEAD, without credentials', async () => {
    const t = await startHost();
    for (const [path, status] of [
      ['/livez', 'ok'],
      ['/readyz', 'ready'],
    ] as const) {
      const res = await get(`${t.url}${path}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status });
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(res.headers.get('set-cookie')).toBeNull();
      const head = await fetch(`${t.url}${path}`, { method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(head.headers.get('cache-control')).toBe('no-store');
      expect(await head.text()).toBe('');
    }
    // The query string does not change the path.
    expect((await get(`${t.url}/readyz?verbose=1`)).status).toBe(200);
  });

  it('answer only on their exact path and for GET and HEAD: the neighbours go down the pipeline', async () => {
    const t = await startHost();
    for (const path of ['/readyz/', '/readyzx', '/READYZ', '/livez/', '/livezz', '/readyz/x', '/%72eadyz']) {
      const res = await get(`${t.url}${path}`);
      expect(res.status, path).toBe(404);
      expect(res.text, path).not.toMatch(/"status"/);
    }
    const post = await get(`${t.url}/readyz`, { method: 'POST' });
    expect(post.status).toBe(404);
    expect(post.text).not.toMatch(/"status":"ready"/);
  });

  it('answer over HTTP/2 as over HTTP/1.1', async () => {
    const home = hosts.home(
      testAppSettings({
        AppSettings: { LoadModules: ['probe'], ServerDevCertFilePath: 'dev.crt', ServerDevCertKeyFilePath: 'dev.key' },
      }),
      moduleFiles(['probe']),
    );
    makeTestCertificate(home.appDir);
    const t = await hosts.start(home, { probe: probeModule() }, {}, { tlsPort: 0 });
    const client = nodeHttp2Client(t.host.tlsUrl);
    cleanups.push(() => client.close());
    for (const method of ['GET', 'HEAD']) {
      const res = await client.send({ method, path: '/readyz' });
      expect(res.version).toBe('2');
      expect(res.status).toBe(200);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.text).toBe(method === 'GET' ? '{"status":"ready"}' : '');
    }
    expect((await client.send({ path: '/readyz/' })).status).toBe(404);
  });

  it('take their paths from AppSettings:Health, and an empty path turns one off', async () => {
    const t = await startHost({ Health: { ReadinessPath: '/health/ready', LivenessPath: '' } });
    expect((await get(`${t.url}/health/ready`)).body).toEqual({ status: 'ready' });
    expect((await get(`${t.url}/readyz`)).status).toBe(404);
    expect((await get(`${t.url}/livez`)).status).toBe(404);
  });

  it('are answered before the client-address allow-list and AllowedHosts, which still refuse every other path', async () => {
    const byAddress = await startHost({ WithOnlyIPs: ['10.9.9.9'] });
    expect((await get(`${byAddress.url}/readyz`)).status).toBe(200);
    expect((await get(`${byAddress.url}/probe-static`)).status).toBe(403);
    const t = await startHost();
    const hostOnly = hosts.home(
      testAppSettings({ AppSettings: { LoadModules: ['probe'] }, AllowedHosts: 'app.example.com' }),
      moduleFiles(['probe']),
    );
    const byHost = await hosts.start(hostOnly, { probe: probeModule() });
    expect((await get(`${byHost.url}/readyz`)).status).toBe(200);
    expect((await get(`${byHost.url}/probe-static`)).status).toBe(400);
    expect((await get(`${t.url}/probe-static`)).status).toBe(200);
  });
});

describe('readiness', () => {
  it('is 503 with Retry-After while the host starts: its listeners are not all open yet', async () => {
    const home = hosts.home(testAppSettings());
    const host = await createHost({ appDir: home.appDir, logging: { quiet: true } });
    cleanups.push(() => host.close({ graceMs: 500 }));
    // The plain listener's server, answering before listen() has opened every listener.
    await new Promise<void>((resolve) => host.server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(host.server.address() as AddressInfo).port}`;
    const res = await get(`${url}/readyz`);
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body).toEqual({ status: 'not ready', failed: ['starting'] });
    // Alive all the same: a supervisor must not restart a host that is starting.
    expect((await get(`${url}/livez`)).status).toBe(200);
    await new Promise<void>((resolve) => host.server.close(() => resolve()));
  });

  it('fails from the moment a stop begins, while requests are still answered during the stop delay', async () => {
    const t = await startHost({ Health: { StopDelaySeconds: 1 } });
    expect((await get(`${t.url}/readyz`)).status).toBe(200);
    const closing = t.host.close({ graceMs: 2_000 });
    const during = await get(`${t.url}/readyz`);
    expect(during.status).toBe(503);
    expect(during.body).toEqual({ status: 'not ready', failed: ['stopping'] });
    expect(during.headers.get('retry-after')).toBe('1');
    // A balancer that has not noticed yet still gets its requests answered.
    const served = await get(`${t.url}/probe-static`);
    expect(served.status).toBe(200);
    expect((await get(`${t.url}/livez`)).status).toBe(200);
    await closing;
  });

  it('fails while a module that LoadModules names is there but could not be loaded; a module not installed is not a failure', async () => {
    const broken = await startHost(
      { LoadModules: ['probe', 'broken', 'notinstalled'] },
      { 'modules/broken/module.json': { ModuleID: 'broken' } },
    );
    const res = await get(`${broken.url}/readyz`);
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ status: 'not ready', failed: ['modules'], modules: ['broken'] });
    // Never a host path, even though the reason the log gives has one.
    expect(res.text).not.toContain(broken.home.home);
    const fine = await startHost({ LoadModules: ['probe', 'notinstalled'] });
    expect((await get(`${fine.url}/readyz`)).status).toBe(200);
  });

  it('fails while the shared session store does not answer, and comes back with it, without a request needing a session', async () => {
    const port = await freePort();
    const password = 'readiness-redis-secret';
    let redis = await startRedisServer(port, password);
    cleanups.push(() => redis.stop());
    const t = await startHost({
      SessionState: {
        CacheType: 'Redis',
        RedisConnectionString: `127.0.0.1:${port},password=${password}`,
        StoreTimeoutSeconds: 1,
      },
      Health: { StoreProbeIntervalSeconds: 0.2 },
    });
    expect((await get(`${t.url}/readyz`)).status).toBe(200);
    await redis.stop();
    let down: Awaited<ReturnType<typeof get>> | undefined;
    await vi.waitFor(
      async () => {
        down = await get(`${t.url}/readyz`);
        expect(down.status).toBe(503);
      },
      { timeout: 20_000, interval: 100 },
    );
    expect(down!.body).toEqual({ status: 'not ready', failed: ['sessionStore'] });
    expect(down!.text).not.toContain(password);
    expect(down!.text).not.toContain(String(port));
    // Liveness is not readiness: the process is fine.
    expect((await get(`${t.url}/livez`)).status).toBe(200);
    redis = await startRedisServer(port, password);
    await vi.waitFor(async () => expect((await get(`${t.url}/readyz`)).status).toBe(200), {
      timeout: 20_000,
      interval: 100,
    });
  });
});

describe('liveness', () => {
  it('is 503 once the event loop was held past EventLoopDelayLimitMs, and 200 again when it runs freely', async () => {
    const t = await startHost({ Health: { EventLoopDelayLimitMs: 150 } });
    // Start-up itself may have held the loop: wait for a free-running loop first.
    await vi.waitFor(async () => expect((await get(`${t.url}/livez`)).status).toBe(200), {
      timeout: 10_000,
      interval: 200,
    });
    // Synchronous work holds the loop the host shares with this test for about 600 ms.
    const until = Date.now() + 600;
    while (Date.now() < until) fs.statSync('.');
    const held = await get(`${t.url}/livez`);
    expect(held.status).toBe(503);
    expect(held.body).toEqual({ status: 'unhealthy', failed: ['eventLoop'] });
    expect(held.headers.get('retry-after')).toBe('1');
    await vi.waitFor(async () => expect((await get(`${t.url}/livez`)).status).toBe(200), {
      timeout: 10_000,
      interval: 200,
    });
  });
});

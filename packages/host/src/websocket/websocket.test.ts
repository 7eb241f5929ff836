import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { createConnection } from 'mysql2';
import { describe, expect, it, vi } from 'vitest';
import { WebSocket } from 'ws';
import type { AckModuleFactory } from '../modules/contract.js';
import { moduleFiles, TcpRelay, testAppSettings, testDatabases, useTestHosts } from '../test-support/index.js';
import { curlClient, https1Client, makeTestCertificate } from '../test-support/protocols.js';
import { rawConnection } from '../test-support/raw-socket.js';

const hosts = useTestHosts();

/**
 * A module offering `/echo/socket`: greets with the user and session count it sees, then echoes.
 * `/echo/api/sign-in` signs `ana` in; `/echo/api/count` counts in the session.
 */
const echoModule: AckModuleFactory = (ctx) => {
  const router = ctx.host.createRouter();
  router.get('/sign-in', async (req, res) => {
    await ctx.host.signIn.issue(req, res, { UserID: 'ana', UserName: 'Ana' });
    res.json({ ok: true });
  });
  router.post('/sign-out', async (req, res) => {
    await ctx.host.signIn.clear(req, res);
    res.json({ ok: true });
  });
  router.get('/hello', (_req, res) => res.type('text/plain').send('hello'));
  router.post('/echo', async (req, res) => {
    let body = '';
    for await (const chunk of req) body += String(chunk);
    res.type('text/plain').send(`got ${body}`);
  });
  router.get('/count', (req, res) => {
    const session = req.session;
    session.count = Number(session.count ?? 0) + 1;
    res.json({ count: session.count });
  });
  return {
    routes: [{ mount: '/echo/api', handler: router }],
    upgrades: [
      {
        path: '/echo/socket',
        handler(socket, req) {
          socket.send(
            JSON.stringify({
              user: req.ackUser?.UserID ?? null,
              count: req.session?.count ?? null,
              ip: req.ack.clientIp,
            }),
          );
          socket.on('message', (data, isBinary) => socket.send(data, { binary: isBinary }));
        },
      },
    ],
  };
};

async function startEcho(
  appSettings: Record<string, unknown> = {},
  sections: Record<string, unknown> = {},
  tls = false,
) {
  const home = hosts.home(
    testAppSettings({ AppSettings: { LoadModules: ['echo'], ...appSettings }, ...sections }),
    moduleFiles(['echo']),
  );
  // A self-signed PEM pair for 127.0.0.1, for the HTTPS listener (ws.crt, ws.key).
  if (tls) makeTestCertificate(home.appDir, 'ws', '127.0.0.1');
  const started = await hosts.start(home, { echo: echoModule }, {}, tls ? { tlsPort: 0 } : {});
  return { ...started, ws: started.url.replace(/^http/, 'ws') + '/echo/socket' };
}

/** Opens a socket and resolves with it and its first message (the greeting). */
async function connect(url: string, options: ConstructorParameters<typeof WebSocket>[2] = {}) {
  const socket = new WebSocket(url, options);
  const [greeting] = (await once(socket, 'message')) as [Buffer];
  return {
    socket,
    greeting: JSON.parse(greeting.toString()) as { user: string | null; count: number | null; ip: string },
  };
}

/** Resolves with the status and problem body of a refused upgrade. */
async function refusal(url: string, options: ConstructorParameters<typeof WebSocket>[2] = {}) {
  const socket = new WebSocket(url, options);
  socket.on('error', () => {});
  const [, res] = (await once(socket, 'unexpected-response')) as [unknown, IncomingMessage];
  let body = '';
  for await (const chunk of res) body += chunk;
  socket.terminate();
  return {
    status: res.statusCode,
    type: res.headers['content-type'],
    problem: JSON.parse(body) as { code: string; detail: string },
  };
}

const closed = async (socket: WebSocket) => {
  const [code] = (await once(socket, 'close')) as [number, Buffer];
  return code;
};

describe('WebSocket upgrades', () => {
  it('refuses a cross-site Origin with 403 and accepts the same origin, a WithOrigins entry and a client without Origin', async () => {
    const { url, ws } = await startEcho({ WithOrigins: ['https://screens.example.org'] });
    const refused = await refusal(ws, { origin: 'https://evil.example' });
    expect(refused.status).toBe(403);
    expect(refused.type).toMatch(/^application\/problem\+json/);
    expect(refused.problem.code).toBe('websocket.origin_not_allowed');
    // Same host, other scheme: not the same origin.
    expect((await refusal(ws, { origin: url.replace('http:', 'https:') })).status).toBe(403);

    for (const origin of [url, 'https://screens.example.org', undefined]) {
      const { socket, greeting } = await connect(ws, origin ? { origin } : {});
      expect(greeting.user).toBeNull();
      socket.close();
    }
  });

  it('applies WithOnlyIPs to the upgrade', async () => {
    const { ws } = await startEcho({ WithOnlyIPs: ['10.9.8.7'] });
    const refused = await refusal(ws);
    expect(refused.status).toBe(403);
    expect(refused.problem.code).toBe('host.ip_not_allowed');
  });

  it('gives the handler the signed-in user and the session of the cookies', async () => {
    const { url, ws } = await startEcho();
    const signIn = await fetch(`${url}/echo/api/sign-in`);
    const cookies = signIn.headers.getSetCookie().map((c) => c.split(';')[0] ?? '');
    const count = await fetch(`${url}/echo/api/count`, { headers: { cookie: cookies.join('; ') } });
    cookies.push(...count.headers.getSetCookie().map((c) => c.split(';')[0] ?? ''));
    expect(await count.json()).toEqual({ count: 1 });

    const signedIn = await connect(ws, { headers: { cookie: cookies.join('; ') } });
    expect(signedIn.greeting).toMatchObject({ user: 'ana', count: 1, ip: '127.0.0.1' });
    signedIn.socket.close();

    // A tampered authentication cookie proves nobody.
    const tampered = cookies.map((c) => (c.startsWith('ack.AuthenticationScheme=') ? c.slice(0, -3) + 'xyz' : c));
    const anonymous = await connect(ws, { headers: { cookie: tampered.join('; ') } });
    expect(anonymous.greeting.user).toBeNull();
    anonymous.socket.close();
  });

  it('refuses an upgrade 503 while the session store cannot be read, and accepts it with its session once it is back', async () => {
    // MariaDB behind a relay the test cuts: the upgrade reads the session of its cookie from it.
    const relay = new TcpRelay(testDatabases().mysql);
    const port = await relay.listen(0);
    const table = `WsOutage_${process.pid}_${Date.now()}`;
    const { url, ws, close } = await startEcho({
      SessionState: {
        CacheType: 'MySql',
        MySqlConnectionString: `Server=127.0.0.1;Port=${port};Database=test;Uid=root;Pwd=;`,
        MySqlSchemaName: 'test',
        MySqlTableName: table,
      },
    });
    try {
      const count = await fetch(`${url}/echo/api/count`);
      expect(await count.json()).toEqual({ count: 1 });
      const cookie = count.headers.get('set-cookie')!.split(';')[0]!;
      await relay.cut();
      const refused = await refusal(ws, { headers: { cookie } });
      expect(refused.status).toBe(503);
      expect(refused.problem.code).toBe('websocket.session_unavailable');
      await relay.listen(port);
      await vi.waitFor(
        async () => {
          const { socket, greeting } = await connect(ws, { headers: { cookie } });
          socket.close();
          expect(greeting.count).toBe(1);
        },
        { timeout: 20_000, interval: 250 },
      );
    } finally {
      await close();
      await relay.cut();
      const admin = createConnection(testDatabases().mysqlConnection);
      await admin.promise().query(`drop table if exists \`${table}\``);
      await admin.promise().end();
    }
  });

  it('refuses a signed-out authentication cookie on the upgrade, as on any request', async () => {
    const { url, ws } = await startEcho();
    const signIn = await fetch(`${url}/echo/api/sign-in`);
    const cookies = signIn.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    const before = await connect(ws, { headers: { cookie: cookies } });
    expect(before.greeting.user).toBe('ana');
    before.socket.close();
    expect((await fetch(`${url}/echo/api/sign-out`, { method: 'POST', headers: { cookie: cookies } })).status).toBe(
      200,
    );
    // The same cookies, replayed after sign-out: the socket opens, but for nobody.
    const after = await connect(ws, { headers: { cookie: cookies } });
    expect(after.greeting).toMatchObject({ user: null, count: null });
    after.socket.close();
  });

  it('applies AllowedHosts and the one-Host rule to the upgrade (DNS rebinding)', async () => {
    const { ws } = await startEcho({}, { AllowedHosts: 'localhost' });
    const rebound = await refusal(ws, {
      headers: { host: 'rebound.attacker.test' },
      origin: 'http://rebound.attacker.test',
    });
    expect(rebound.status).toBe(400);
    expect(rebound.problem.code).toBe('request.host_not_allowed');
    const allowed = await connect(ws, { headers: { host: 'localhost' } });
    expect(allowed.greeting.user).toBeNull();
    allowed.socket.close();
  });

  it('enforces Kestrel:Limits:MaxConcurrentUpgradedConnections with a 503 before upgrading', async () => {
    const { ws, host } = await startEcho({}, { Kestrel: { Limits: { MaxConcurrentUpgradedConnections: 2 } } });
    const first = await connect(ws);
    const second = await connect(ws);
    const over = await refusal(ws);
    expect(over.status).toBe(503);
    expect(over.problem.code).toBe('websocket.too_many_connections');

    first.socket.close();
    await closed(first.socket);
    await expect.poll(() => host.upgrades.open).toBe(1);
    const third = await connect(ws);
    expect(third.greeting.user).toBeNull();
    second.socket.close();
    third.socket.close();
  });

  it('closes a socket that sends a message over MaxPayloadBytes with 1009 and echoes one within it', async () => {
    const { ws } = await startEcho({ WebSocket: { MaxPayloadBytes: 1024 } });
    const { socket } = await connect(ws);
    socket.send('a'.repeat(1024));
    const [echo] = (await once(socket, 'message')) as [Buffer];
    expect(echo.length).toBe(1024);
    socket.send('b'.repeat(1025));
    expect(await closed(socket)).toBe(1009);
  });

  it('leaves per-message deflate off unless EnablePerMessageDeflate turns it on', async () => {
    const off = await startEcho();
    const plain = await connect(off.ws, { perMessageDeflate: true });
    expect(plain.socket.extensions).toBe('');
    plain.socket.close();
    const on = await startEcho({ WebSocket: { EnablePerMessageDeflate: true } });
    const deflated = await connect(on.ws, { perMessageDeflate: true });
    expect(deflated.socket.extensions).toContain('permessage-deflate');
    deflated.socket.close();
  });

  it('drops a peer that stops answering pings and keeps one that answers', async () => {
    const { ws, host } = await startEcho({ WebSocket: { KeepAliveInterval: '00:00:00.5' } });
    const live = await connect(ws);
    const dead = await connect(ws, { autoPong: false });
    // The host terminates the silent peer: the client sees the connection end without a close frame.
    expect(await closed(dead.socket)).toBe(1006);
    expect(live.socket.readyState).toBe(WebSocket.OPEN);
    await expect.poll(() => host.upgrades.open).toBe(1);
    live.socket.close();
  });

  it('accepts wss:// on the HTTPS listener, where the same origin is the https one', async () => {
    const { host } = await startEcho({ ServerDevCertFilePath: 'ws.crt', ServerDevCertKeyFilePath: 'ws.key' }, {}, true);
    const wss = host.tlsUrl.replace(/^https/, 'wss') + '/echo/socket';
    const { socket, greeting } = await connect(wss, { rejectUnauthorized: false, origin: host.tlsUrl });
    expect(greeting.user).toBeNull();
    socket.close();
    expect(
      (await refusal(wss, { rejectUnauthorized: false, origin: host.tlsUrl.replace('https:', 'http:') })).status,
    ).toBe(403);
  });

  it('answers a plain GET at a socket path with 426 Upgrade Required', async () => {
    const { url } = await startEcho();
    const res = await fetch(`${url}/echo/socket`);
    expect(res.status).toBe(426);
    expect(res.headers.get('upgrade')).toBe('websocket');
    expect(((await res.json()) as { code: string }).code).toBe('websocket.upgrade_required');
  });

  it('answers 404 for a path no module offers, and closes every socket with 1001 when the host closes', async () => {
    const { ws, url, close } = await startEcho();
    expect((await refusal(`${url.replace(/^http/, 'ws')}/other/socket`)).status).toBe(404);
    const a = await connect(ws);
    const b = await connect(ws);
    const codes = Promise.all([closed(a.socket), closed(b.socket)]);
    await close();
    expect(await codes).toEqual([1001, 1001]);
  });
});

describe('an upgrade offer other than WebSocket (curl --http2: Upgrade: h2c)', () => {
  // What curl --http2 sends over cleartext: the HTTP/1.1 request, offering to switch to h2c.
  const H2C_OFFER =
    'Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAoAAAAAIAAAAA\r\n';

  it('is answered as the HTTP/1.1 request it also is, on a connection that stays usable', async () => {
    const { url } = await startEcho();
    const raw = await rawConnection(url);
    raw.write(`GET /echo/api/hello HTTP/1.1\r\nHost: 127.0.0.1\r\n${H2C_OFFER}\r\n`);
    const first = await raw.until(/\r\n\r\nhello/);
    expect(first).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(first).not.toMatch(/^HTTP\/1\.1 101/m);
    // A body sent with the offer reaches the route, and the connection takes the next request.
    raw.write(
      `POST /echo/api/echo HTTP/1.1\r\nHost: 127.0.0.1\r\n${H2C_OFFER}Content-Type: text/plain\r\nContent-Length: 5\r\n\r\nabcde`,
    );
    const second = await raw.until(/got abcde/);
    expect(second.slice(first.length)).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*got abcde$/);
    raw.destroy();
  });

  it('reaches a route through curl --http2, which then goes on over HTTP/1.1, and over HTTP/1.1 on the HTTPS port', async () => {
    const { url, host } = await startEcho(
      { ServerDevCertFilePath: 'ws.crt', ServerDevCertKeyFilePath: 'ws.key' },
      {},
      true,
    );
    const answer = await curlClient(url)({ path: '/echo/api/hello' });
    expect(answer).toMatchObject({ version: '1.1', status: 200, text: 'hello' });
    const overTls = await https1Client(host.tlsUrl)({
      path: '/echo/api/hello',
      headers: { connection: 'Upgrade, HTTP2-Settings', upgrade: 'h2c', 'http2-settings': 'AAMAAABkAAQAoAAAAAIAAAAA' },
    });
    expect(overTls).toMatchObject({ version: '1.1', status: 200, text: 'hello' });
  });

  it('leaves a real WebSocket upgrade working, and Upgrade: websocket to a path no module offers refused', async () => {
    const { url, ws } = await startEcho();
    const { socket, greeting } = await connect(ws);
    expect(greeting.user).toBeNull();
    socket.close();
    const raw = await rawConnection(url);
    raw.write(
      'GET /echo/api/hello HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n' +
        'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
    );
    const refused = await raw.until(/websocket\.not_found/);
    expect(refused).toMatch(/^HTTP\/1\.1 404 /);
    expect(await raw.closedWithin(5_000)).toBe(true);
  });
});

import http from 'node:http';
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import {
  moduleFiles,
  probeModule,
  testAppSettings,
  useTestHosts,
  type TestHome,
  type TestHost,
  waitFor,
} from '../test-support/index.js';

const hosts = useTestHosts();

async function start(
  appSettings: Record<string, unknown> = {},
  rest: Record<string, unknown> = {},
  files: Record<string, string | object> = {},
): Promise<TestHost> {
  const home: TestHome = hosts.home(
    testAppSettings({ AppSettings: { LoadModules: ['probe'], ...appSettings }, ...rest }),
    { ...moduleFiles(['probe']), ...files },
  );
  return hosts.start(home, { probe: probeModule() });
}

/** A raw HTTP/1.1 exchange, for requests fetch refuses to send. */
function rawRequest(url: string, text: string): Promise<string> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1', () => socket.write(text));
    let out = '';
    socket.on('data', (d) => (out += d.toString('latin1')));
    socket.on('end', () => resolve(out));
    socket.on('error', reject);
    socket.setTimeout(5000, () => {
      socket.destroy();
      resolve(out);
    });
  });
}

describe('pipeline phases', () => {
  it('runs the public phase before the session: a public answer carries no session cookie, a route answer does', async () => {
    const { url } = await start();
    const pub = await fetch(`${url}/probe-public`);
    expect(await pub.text()).toBe('public:probe');
    expect(pub.headers.get('set-cookie')).toBeNull();
    const route = await fetch(`${url}/probe/api/touch`);
    expect(route.status).toBe(200);
    expect(route.headers.get('set-cookie')).toMatch(/^ack\.Session=/);
    expect(route.headers.get('set-cookie')).toMatch(/HttpOnly/i);
  });

  it('uses SessionCookieName and no session at all when IsSession is false', async () => {
    let { url } = await start({ SessionState: { SessionCookieName: 'Team.Session' } });
    expect((await fetch(`${url}/probe/api/touch`)).headers.get('set-cookie')).toMatch(/^Team\.Session=/);
    ({ url } = await start({ SessionState: { IsSession: false } }));
    const res = await fetch(`${url}/probe/api/touch`);
    expect(await res.json()).toMatchObject({ session: false });
    expect(res.headers.get('set-cookie')).toBeNull();
  });

  it('answers static-phase handlers for GET and HEAD only', async () => {
    const { url } = await start();
    expect(await (await fetch(`${url}/probe-static`)).text()).toBe('static:probe');
    expect((await fetch(`${url}/probe-static`, { method: 'HEAD' })).status).toBe(200);
    expect((await fetch(`${url}/probe-static`, { method: 'POST' })).status).toBe(404);
  });

  it('answers an unknown API path with problem+json and an unknown page with an HTML 404', async () => {
    const { url } = await start();
    const api = await fetch(`${url}/probe/api/nothing`);
    expect(api.status).toBe(404);
    expect(api.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await api.json()).toMatchObject({ type: 'about:blank', status: 404, code: 'not_found' });
    const page = await fetch(`${url}/no/such/page.html`);
    expect(page.status).toBe(404);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
  });

  it('never shows a stack trace; shows the message only in development with IsExceptionDetailText', async () => {
    let { url } = await start({ RunningEnvironment: 'D', IsExceptionDetailText: true });
    let res = await fetch(`${url}/probe/api/boom`);
    expect(res.status).toBe(500);
    let body = await res.text();
    expect(JSON.parse(body)).toMatchObject({ status: 500, code: 'internal_error', detail: 'secret internal detail' });
    expect(body).not.toMatch(/at .*\.ts:\d+/);
    ({ url } = await start({ RunningEnvironment: 'P', IsExceptionDetailText: true }));
    res = await fetch(`${url}/probe/api/boom`);
    body = await res.text();
    expect(res.status).toBe(500);
    expect(body).not.toContain('secret internal detail');
  });
});

describe('edge phase', () => {
  it('sends security headers when EnableSecurityHeaders, on every path, and none when off', async () => {
    let { url } = await start();
    for (const path of ['/probe-public', '/probe-static', '/probe/api/touch', '/missing']) {
      const res = await fetch(`${url}${path}`);
      expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(res.headers.get('x-frame-options'), path).toBe('SAMEORIGIN');
      expect(res.headers.get('referrer-policy'), path).toBe('no-referrer');
      expect(res.headers.get('content-security-policy'), path).toBeNull();
    }
    ({ url } = await start({ Security: { EnableSecurityHeaders: false } }));
    const res = await fetch(`${url}/probe-public`);
    expect(res.headers.get('x-content-type-options')).toBeNull();
    expect(res.headers.get('x-frame-options')).toBeNull();
  });

  it("keeps a responder's own headers over the edge's and merges Vary lists, on every kind of answer", async () => {
    const { url } = await start();
    const own = await fetch(`${url}/probe/api/own-headers`);
    expect(own.headers.get('x-frame-options')).toBe('DENY');
    expect(own.headers.get('vary')).toBe('Origin, Accept');
    expect(own.headers.get('x-content-type-options')).toBe('nosniff');
    // Once each: a Vary or security header written twice would show as a repeated list.
    for (const path of ['/probe-public', '/probe-static', '/probe/api/touch', '/missing', '/probe/api/missing']) {
      const res = await fetch(`${url}${path}`);
      expect(res.headers.get('vary'), path).toBe('Origin');
      expect(res.headers.get('x-frame-options'), path).toBe('SAMEORIGIN');
    }
  });

  it('adds a Content-Security-Policy only when IsEnabledCSP, from content-security-policy.txt when present', async () => {
    const { url } = await start(
      { IsEnabledCSP: true },
      {},
      { 'app/content-security-policy.txt': "default-src 'self';\n img-src 'self' data:;" },
    );
    const res = await fetch(`${url}/probe-public`);
    expect(res.headers.get('content-security-policy')).toBe("default-src 'self'; img-src 'self' data:;");
  });

  it('gives listed origins credentialed CORS and others public CORS', async () => {
    const { url } = await start({ WithOrigins: ['http://screens.example', 'https://*.team.example'] });
    const listed = await fetch(`${url}/probe-public`, { headers: { Origin: 'http://screens.example' } });
    expect(listed.headers.get('access-control-allow-origin')).toBe('http://screens.example');
    expect(listed.headers.get('access-control-allow-credentials')).toBe('true');
    const wildcard = await fetch(`${url}/probe-public`, { headers: { Origin: 'https://a.team.example' } });
    expect(wildcard.headers.get('access-control-allow-origin')).toBe('https://a.team.example');
    const other = await fetch(`${url}/probe-public`, { headers: { Origin: 'http://elsewhere.example' } });
    expect(other.headers.get('access-control-allow-origin')).toBe('*');
    expect(other.headers.get('access-control-allow-credentials')).toBeNull();
  });

  it('passes a preflight for a JSON body and custom headers such as AuthorizationKey', async () => {
    const { url } = await start({ WithOrigins: ['http://screens.example'] });
    const res = await fetch(`${url}/probe/api/json`, {
      method: 'OPTIONS',
      headers: {
        Origin: 'http://screens.example',
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'content-type,authorizationkey',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('http://screens.example');
    expect(res.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('authorizationkey');
    expect(res.headers.get('access-control-allow-methods')).toContain('POST');
  });

  it('denies CORS to unlisted origins when EnablePublicCorsPolicy is false', async () => {
    const { url } = await start({
      WithOrigins: ['http://screens.example'],
      Security: { EnablePublicCorsPolicy: false },
    });
    const simple = await fetch(`${url}/probe-public`, { headers: { Origin: 'http://elsewhere.example' } });
    expect(simple.headers.get('access-control-allow-origin')).toBeNull();
    const preflight = await fetch(`${url}/probe/api/json`, {
      method: 'OPTIONS',
      headers: { Origin: 'http://elsewhere.example', 'Access-Control-Request-Method': 'POST' },
    });
    expect(preflight.status).toBe(403);
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('answers 413 for a body over Kestrel:Limits:MaxRequestBodySize', async () => {
    const { url } = await start({}, { Kestrel: { Limits: { MaxRequestBodySize: 1024 } } });
    const ok = await fetch(`${url}/probe/api/json`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ a: 'x'.repeat(500) }),
    });
    expect(ok.status).toBe(200);
    const big = await fetch(`${url}/probe/api/json`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ a: 'x'.repeat(2000) }),
    });
    expect(big.status).toBe(413);
    expect(await big.json()).toMatchObject({ status: 413, code: 'request.body_too_large' });
  });

  it('refuses clients outside WithOnlyIPs with 403, on every path', async () => {
    const { url } = await start({ WithOnlyIPs: ['10.9.9.9'] });
    for (const path of ['/probe-public', '/probe-static', '/probe/api/touch']) {
      const res = await fetch(`${url}${path}`);
      expect(res.status, path).toBe(403);
      expect(await res.json()).toMatchObject({ code: 'host.ip_not_allowed' });
    }
  });

  it('allows listed client addresses, and everyone with "*"', async () => {
    let { url } = await start({ WithOnlyIPs: ['127.0.0.1, the test runner'] });
    expect((await fetch(`${url}/probe-public`)).status).toBe(200);
    ({ url } = await start({ WithOnlyIPs: ['*'] }));
    expect((await fetch(`${url}/probe-public`)).status).toBe(200);
  });

  it('ignores a spoofed X-Forwarded-For from a sender that is not a trusted proxy', async () => {
    const { url } = await start({ WithOnlyIPs: ['10.1.1.1'], UseForwardProxy: true, ForwardProxyIP: ['10.0.0.5'] });
    const res = await fetch(`${url}/probe-public`, { headers: { 'X-Forwarded-For': '10.1.1.1' } });
    expect(res.status).toBe(403);
  });

  it('takes the client address from X-Forwarded-For when the sender is a trusted proxy', async () => {
    const { url } = await start({ WithOnlyIPs: ['10.1.1.1'], UseForwardProxy: true, ForwardProxyIP: ['127.0.0.1'] });
    const allowed = await fetch(`${url}/probe/api/whoami`, { headers: { 'X-Forwarded-For': '10.1.1.1' } });
    expect(allowed.status).toBe(200);
    expect(await allowed.json()).toEqual({ clientIp: '10.1.1.1' });
    const denied = await fetch(`${url}/probe/api/whoami`, { headers: { 'X-Forwarded-For': '10.2.2.2' } });
    expect(denied.status).toBe(403);
  });

  it('compresses responses when UseResponseComression', async () => {
    const { url } = await start({ UseResponseComression: true });
    const body = JSON.stringify({ text: 'y'.repeat(5000) });
    const res = await new Promise<http.IncomingMessage>((resolve) => {
      const req = http.request(
        `${url}/probe/api/json`,
        { method: 'POST', headers: { 'Content-Type': 'application/json', 'Accept-Encoding': 'gzip' } },
        resolve,
      );
      req.end(body);
    });
    res.resume();
    expect(res.headers['content-encoding']).toBe('gzip');
  });
});

describe('bad input never crashes the host', () => {
  it('answers a malformed JSON body with 400 problem+json', async () => {
    const { url } = await start();
    const res = await fetch(`${url}/probe/api/json`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{"a": ',
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/problem\+json/);
    expect(await res.json()).toMatchObject({ status: 400, code: 'request.entity_parse_failed' });
    expect((await fetch(`${url}/probe-public`)).status).toBe(200);
  });

  it('answers oversized headers with 431 and keeps serving', async () => {
    const { url } = await start();
    const reply = await rawRequest(
      url,
      `GET /probe-public HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    );
    expect(reply).toMatch(/^HTTP\/1\.1 431/);
    expect((await fetch(`${url}/probe-public`)).status).toBe(200);
  });

  it('answers a malformed percent-encoding with 400 on every path', async () => {
    const { url } = await start();
    for (const path of ['/probe-public%', '/%E0%A4%A', '/probe/api/%zz']) {
      const reply = await rawRequest(url, `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      expect(reply, path).toMatch(/^HTTP\/1\.1 400/);
      expect(reply, path).toContain('request.bad_encoding');
    }
  });

  it('answers a garbled request line with 400 and keeps serving', async () => {
    const { url } = await start();
    const reply = await rawRequest(url, 'NOT A REQUEST\r\n\r\n');
    expect(reply).toMatch(/^HTTP\/1\.1 400/);
    expect((await fetch(`${url}/probe-public`)).status).toBe(200);
  });
});

describe('connection limits', () => {
  it('drops a client that sends its headers too slowly (RequestHeadersTimeout)', async () => {
    const { url } = await start({}, { Kestrel: { Limits: { RequestHeadersTimeout: '00:00:01' } } });
    const { port } = new URL(url);
    // The client gives up after 10 s and the default is 30 s: a 408 can only come from the 1 s setting.
    const reply = await new Promise<string>((resolve) => {
      const socket = net.connect(Number(port), '127.0.0.1', () =>
        socket.write('GET /probe-public HTTP/1.1\r\nHost: x\r\n'),
      );
      let out = '';
      socket.on('data', (d) => (out += d.toString()));
      socket.on('close', () => resolve(out));
      socket.setTimeout(10_000, () => socket.destroy());
    });
    expect(reply).toMatch(/^HTTP\/1\.1 408/);
  });

  it('keeps idle connections open for KeepAliveTimeout and says so', async () => {
    const { url } = await start({}, { Kestrel: { Limits: { KeepAliveTimeout: '00:00:07' } } });
    const res = await fetch(`${url}/probe-public`);
    expect(res.headers.get('keep-alive')).toBe('timeout=7');
  });

  it('refuses connections beyond MaxConcurrentConnections', async () => {
    const { url } = await start({}, { Kestrel: { Limits: { MaxConcurrentConnections: 1 } } });
    const { port } = new URL(url);
    const first = net.connect(Number(port), '127.0.0.1');
    await new Promise((r) => first.once('connect', r));
    first.write('GET /probe-public HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise((r) => first.once('data', r));
    const second = await rawRequest(url, 'GET /probe-public HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(second).toBe('');
    first.destroy();
    // The host sees the first connection close a moment later: until then a new one is still refused.
    const third = await waitFor(
      async () => {
        const reply = await rawRequest(url, 'GET /probe-public HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
        return /^HTTP\/1\.1 /.test(reply) && reply;
      },
      { message: 'a connection to be accepted once the first one closed' },
    );
    expect(third).toMatch(/^HTTP\/1\.1 200/);
  });
});

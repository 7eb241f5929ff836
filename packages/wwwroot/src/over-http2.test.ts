import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AckModuleFactory } from '@ack/host';
import {
  CONNECTION_SPECIFIC_HEADERS,
  createTestHome,
  curlClient,
  https1Client,
  makeTestCertificate,
  multipart,
  nodeHttp2Client,
  startTestHost,
  testAppSettings,
  type Client,
  type Reply,
  type TestHost,
} from '@ack/host/test-support';
import { wwwrootModule } from './index.js';
import { whoamiModule } from './test-support/sign-in-fixture.js';

// Every route family over HTTP/2 on the TLS port, with two real clients (Node's http2 client,
// which streams bodies without Content-Length, and curl --http2), and the same port answering
// HTTP/1.1 by ALPN. docs/protocols.md.

const TOKEN = 'h2-sync-token';
const HOST_KEY = 'h2-host-access-id';
const MAX_BODY = 256 * 1024;
const MAX_FILE = 64 * 1024;
const basic = `Basic ${Buffer.from(`${TOKEN}:`).toString('base64')}`;
const SCRIPT = 'console.log("served over h2");\n'.repeat(100);

let certDir: string;
let running: TestHost;
let tlsUrl: string;
const refreshCalls: string[] = [];

const transact: AckModuleFactory = (ctx) => {
  const router = ctx.host.createRouter();
  router.get('/transaction/refresh', (req, res) => {
    refreshCalls.push(`${String(req.query.changeType)} ${String(req.query.filePath)}`);
    res.json(true);
  });
  return { routes: [{ mount: '/transact/api', handler: router }] };
};

beforeAll(async () => {
  certDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-h2-cert-'));
  const cert = makeTestCertificate(certDir);
  const home = createTestHome(
    testAppSettings({
      AppSettings: {
        LoadModules: ['wwwroot', 'whoami', 'transact'],
        RunningEnvironment: 'D',
        IsEnabledDevAutoSignIn: true,
        CookiePrefixName: 'h2',
        UseContractSync: true,
        HostAccessID: HOST_KEY,
        UseResponseComression: true,
        WithOrigins: ['https://app.example'],
        ServerDevCertFilePath: cert.cert,
        ServerDevCertKeyFilePath: cert.key,
        Security: { MaxContractSyncFileBytes: MAX_FILE },
      },
      Kestrel: { Limits: { MaxRequestBodySize: MAX_BODY, Http2: { MaxStreamsPerConnection: 7 } } },
    }),
    {
      'modules/wwwroot/module.json': {
        ModuleID: 'wwwroot',
        ModuleConfig: {
          FileSyncTokens: [TOKEN],
          SharedFileConfigPath: '../config/shared.json',
          DevAutoSignIn: { UserID: 'h2dev', UserName: 'HTTP/2 Developer' },
        },
      },
      'modules/whoami/module.json': { ModuleID: 'whoami' },
      'modules/transact/module.json': { ModuleID: 'transact' },
      'modules/wwwroot/wwwroot/index.html': `<!doctype html><title>root</title><p>${'static root '.repeat(200)}</p>`,
      // Written original first, so the sidecars are never older than it (an older one is not served).
      'modules/wwwroot/wwwroot/app.js': SCRIPT,
      'modules/wwwroot/wwwroot/app.js.br': brotliCompressSync(SCRIPT),
      'modules/wwwroot/wwwroot/app.js.gz': gzipSync(SCRIPT),
      'contracts/wwwroot/HDS/SYS/SYS010.html': '<p>contract screen v1</p>',
      'config/shared.json': { items: [{ requestPath: '/shared/theme.css', hostFilePath: '../shared/theme.css' }] },
      'shared/theme.css': 'h1 { color: green }',
    },
  );
  running = await startTestHost(home, { wwwroot: wwwrootModule, whoami: whoamiModule, transact }, {}, { tlsPort: 0 });
  tlsUrl = running.host.tlsUrl;
});

afterAll(async () => {
  await running?.close();
  running?.home.remove();
  fs.rmSync(certDir, { recursive: true, force: true });
});

/** What every HTTP/2 answer must be, whatever the route. */
function expectHttp2(r: Reply, { securityHeaders = true } = {}): void {
  expect(r.version).toBe('2');
  for (const name of CONNECTION_SPECIFIC_HEADERS) expect(r.headers).not.toHaveProperty(name);
  // The edge's security headers, on every route (a request refused by its size is answered before them, as over HTTP/1.1).
  if (!securityHeaders) return;
  expect(r.headers['x-content-type-options']).toBe('nosniff');
  expect(r.headers['referrer-policy']).toBe('no-referrer');
}

/**
 * A 304 over HTTP/2: only the headers RFC 9110 lists for it (and a responder's own extras), no
 * security headers (the cache keeps its stored 200's), as over HTTP/1.1.
 */
function expectNotModified(r: Reply, extras: string[] = []): void {
  expect(r.version).toBe('2');
  expect(r.status).toBe(304);
  expect(r.body.length).toBe(0);
  const allowed = new Set(['cache-control', 'content-location', 'date', 'etag', 'expires', 'vary', ...extras]);
  expect(Object.keys(r.headers).filter((n) => !allowed.has(n))).toEqual([]);
  expect(r.headers.etag).toBeDefined();
}

const cookiesOf = (r: Reply) => (r.headers['set-cookie'] ?? '').split('\n').filter(Boolean);

/** Route families, each run with both clients. */
const families: Array<[string, (send: Client) => Promise<void>]> = [
  [
    'static root (with compression)',
    async (send) => {
      const plain = await send({ path: '/index.html' });
      expectHttp2(plain);
      expect(plain.status).toBe(200);
      expect(plain.headers['content-type']).toMatch(/^text\/html/);
      expect(plain.text).toContain('static root');
      const gz = await send({ path: '/index.html', headers: { 'accept-encoding': 'gzip' } });
      expectHttp2(gz);
      expect(gz.headers['content-encoding']).toBe('gzip');
      expect(gunzipSync(gz.body).toString()).toBe(plain.text);
    },
  ],
  [
    'precompressed sidecars, 304 per encoding, fixed bodies (manifest, htmx asset)',
    async (send) => {
      const br = await send({ path: '/app.js', headers: { 'accept-encoding': 'gzip, br' } });
      expectHttp2(br);
      expect(br.status).toBe(200);
      expect(br.headers['content-encoding']).toBe('br');
      expect(br.headers.vary).toMatch(/Accept-Encoding/i);
      expect(brotliDecompressSync(br.body).toString()).toBe(SCRIPT);
      const gz = await send({ path: '/app.js', headers: { 'accept-encoding': 'gzip' } });
      expect(gz.headers['content-encoding']).toBe('gzip');
      expect(gunzipSync(gz.body).toString()).toBe(SCRIPT);
      expect(gz.headers.etag).not.toBe(br.headers.etag);
      const brAgain = await send({
        path: '/app.js',
        headers: { 'accept-encoding': 'br', 'if-none-match': br.headers.etag! },
      });
      expectNotModified(brAgain);
      expect(brAgain.headers.etag).toBe(br.headers.etag);
      expect(brAgain.headers.vary).toBe(br.headers.vary);
      // Another encoding's validator does not match this one.
      expect(
        (await send({ path: '/app.js', headers: { 'accept-encoding': 'gzip', 'if-none-match': br.headers.etag! } }))
          .status,
      ).toBe(200);

      const manifest = await send({ path: '/shared-files/manifest' });
      expect(manifest.headers['ack-live-reload']).toBe('/wwwroot/api/live-reload');
      const manifest304 = await send({
        path: '/shared-files/manifest',
        headers: { 'if-none-match': manifest.headers.etag! },
      });
      expectNotModified(manifest304, ['ack-live-reload', 'access-control-expose-headers']);
      expect(manifest304.headers['ack-live-reload']).toBe('/wwwroot/api/live-reload');
      const htmx = await send({ path: '/wwwroot/api/htmx/htmx.min.js' });
      expectHttp2(htmx);
      expect(htmx.status).toBe(200);
      expect(htmx.headers['content-type']).toMatch(/javascript/);
      const htmx304 = await send({
        path: '/wwwroot/api/htmx/htmx.min.js',
        headers: { 'if-none-match': htmx.headers.etag! },
      });
      expectNotModified(htmx304);
    },
  ],
  [
    'contract screen',
    async (send) => {
      const r = await send({ path: '/view/SYS/SYS010.html' });
      expectHttp2(r);
      expect(r.status).toBe(200);
      expect(r.text).toContain('contract screen');
    },
  ],
  [
    'shared file and manifest',
    async (send) => {
      const css = await send({ path: '/shared/theme.css' });
      expectHttp2(css);
      expect(css.status).toBe(200);
      expect(css.headers['content-type']).toMatch(/^text\/css/);
      expect(css.text).toBe('h1 { color: green }');
      const manifest = await send({ path: '/shared-files/manifest' });
      expectHttp2(manifest);
      expect(JSON.parse(manifest.text)).toEqual([{ requestPath: '/shared/theme.css' }]);
    },
  ],
  [
    'sync upload (multipart) and refresh',
    async (send) => {
      const name = `SYS/UP${Math.random().toString(36).slice(2, 8)}.html`;
      const form = multipart(
        { moduleName: 'wwwroot', changeType: 'Created', filePath: `HDS/${name}` },
        { file: { name: 'x.html', content: '<p>uploaded over h2</p>' } },
      );
      const up = await send({
        method: 'POST',
        path: '/wwwroot/api/sync/upload',
        headers: { authorization: basic, 'content-type': form.contentType },
        body: form.body,
      });
      expectHttp2(up);
      expect(up.status).toBe(200);
      expect(JSON.parse(up.text)).toMatchObject({ module: 'wwwroot', path: `HDS/${name}`, bytes: 23 });
      expect((await send({ path: `/view/${name}` })).text).toBe('<p>uploaded over h2</p>');
      const refresh = await send({
        path: `/wwwroot/api/sync/refresh?moduleName=transact&changeType=Changed&filePath=HDS/${name}`,
        headers: { authorization: basic },
      });
      expectHttp2(refresh);
      expect(refresh.status).toBe(200);
      expect(refreshCalls).toContain(`Changed HDS/${name}`);
    },
  ],
  [
    '/contractsync',
    async (send) => {
      const dest = `SYS/CS${Math.random().toString(36).slice(2, 8)}.json`;
      const form = multipart(
        { moduleID: 'HDS', contractType: 'transact', destFilePath: dest, changeType: 'Created' },
        { file: { name: 'c.json', content: '{"v":2}' } },
      );
      const r = await send({
        method: 'POST',
        path: '/contractsync',
        headers: { hostaccessid: HOST_KEY, 'content-type': form.contentType },
        body: form.body,
      });
      expectHttp2(r);
      expect(r.status).toBe(200);
      const targets = (JSON.parse(r.text) as { targets: Array<{ path: string }> }).targets;
      for (const t of targets) expect(fs.readFileSync(t.path, 'utf8')).toBe('{"v":2}');
      const refused = await send({
        method: 'POST',
        path: '/contractsync',
        headers: { 'content-type': form.contentType },
        body: form.body,
      });
      expect(refused.status).toBe(401);
      expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    },
  ],
  [
    'dev sign-in (Secure cookies, then signed in)',
    async (send) => {
      const r = await send({ path: '/wwwroot/api/dev-account/sign-in?returnUrl=/index.html' });
      expectHttp2(r);
      expect(r.status).toBe(302);
      expect(r.headers.location).toBe('/index.html');
      const cookies = cookiesOf(r);
      expect(cookies.length).toBeGreaterThan(0);
      for (const c of cookies) expect(c).toMatch(/; secure/i);
      const cookie = cookies.map((c) => c.split(';')[0]).join('; ');
      const me = await send({ path: '/whoami/api', headers: { cookie } });
      expectHttp2(me);
      expect(JSON.parse(me.text).user).toMatchObject({ UserID: 'h2dev', UserName: 'HTTP/2 Developer' });
    },
  ],
  [
    'index APIs (GET, JSON POST)',
    async (send) => {
      const hash = await send({ path: '/wwwroot/api/index/sha256hash?text=abc' });
      expectHttp2(hash);
      expect(JSON.parse(hash.text)).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
      const created = await send({
        method: 'POST',
        path: '/wwwroot/api/index/create-id',
        headers: { 'content-type': 'application/json', origin: 'https://app.example' },
        body: JSON.stringify({ fromMinutes: 5 }),
      });
      expectHttp2(created);
      expect(created.status).toBe(200);
      expect(JSON.parse(created.text)).toHaveProperty('requestID');
    },
  ],
  [
    'htmx sample (fragment, form POST)',
    async (send) => {
      const list = await send({ path: '/wwwroot/api/htmx/contacts', headers: { 'hx-request': 'true' } });
      expectHttp2(list);
      expect(list.status).toBe(200);
      expect(list.headers.vary).toMatch(/HX-Request/i);
      expect(list.text).not.toMatch(/<html/i);
      const name = `H2 ${Math.random().toString(36).slice(2, 8)}`;
      const added = await send({
        method: 'POST',
        path: '/wwwroot/api/htmx/contacts',
        headers: { 'hx-request': 'true', 'content-type': 'application/x-www-form-urlencoded' },
        body: `name=${encodeURIComponent(name)}&email=h2%40example.com&phone=1`,
      });
      expectHttp2(added);
      expect(added.status).toBeLessThan(300);
      expect((await send({ path: '/wwwroot/api/htmx/contacts', headers: { 'hx-request': 'true' } })).text).toContain(
        name,
      );
    },
  ],
  [
    '404, problem, 413 and 431 bodies (body and header limits)',
    async (send) => {
      const page = await send({ path: '/no-such-page.html' });
      expectHttp2(page);
      expect(page.status).toBe(404);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      const api = await send({ path: '/wwwroot/api/no-such-api' });
      expectHttp2(api);
      expect(api.status).toBe(404);
      expect(api.headers['content-type']).toMatch(/^application\/problem\+json/);
      const notForm = await send({
        method: 'POST',
        path: '/wwwroot/api/sync/upload',
        headers: { authorization: basic, 'content-type': 'text/plain' },
        body: 'x',
      });
      expect(notForm.status).toBe(415);
      expect(JSON.parse(notForm.text)).toMatchObject({ status: 415, code: 'sync.not_multipart' });
      // A declared length over Kestrel:Limits:MaxRequestBodySize is refused before the body is read.
      const big = Buffer.alloc(MAX_BODY + 1, 97);
      const tooBig = await send({
        method: 'POST',
        path: '/wwwroot/api/index/create-id',
        headers: { 'content-type': 'application/json', 'content-length': String(big.length) },
        body: big,
      });
      expectHttp2(tooBig, { securityHeaders: false });
      expect(tooBig.status).toBe(413);
      expect(JSON.parse(tooBig.text)).toMatchObject({ status: 413, code: 'request.body_too_large' });
      // A streamed file over the sync limit: the upload's own limit while reading.
      const form = multipart(
        { moduleName: 'wwwroot', changeType: 'Created', filePath: 'HDS/SYS/big.html' },
        { file: { name: 'big.html', content: Buffer.alloc(MAX_FILE + 1, 98) } },
      );
      const fileTooBig = await send({
        method: 'POST',
        path: '/wwwroot/api/sync/upload',
        headers: { authorization: basic, 'content-type': form.contentType },
        body: form.body,
      });
      expect(fileTooBig.status).toBe(413);
      expect(JSON.parse(fileTooBig.text)).toMatchObject({ code: 'sync.file_too_large' });
      // Header lists over 16 KiB: 431, as over HTTP/1.1; the connection goes on serving.
      const bigHeaders = await send({ path: '/index.html', headers: { 'x-big': 'a'.repeat(20_000) } });
      expectHttp2(bigHeaders, { securityHeaders: false });
      expect(bigHeaders.status).toBe(431);
      expect(JSON.parse(bigHeaders.text)).toMatchObject({ status: 431, code: 'request.headers_too_large' });
      expect((await send({ path: '/index.html', headers: { 'x-fine': 'a'.repeat(8_000) } })).status).toBe(200);
    },
  ],
  [
    'CORS (credentialed origin, preflight, refused origin)',
    async (send) => {
      const simple = await send({ path: '/wwwroot/api/index/guid', headers: { origin: 'https://app.example' } });
      expectHttp2(simple);
      expect(simple.headers['access-control-allow-origin']).toBe('https://app.example');
      expect(simple.headers['access-control-allow-credentials']).toBe('true');
      const preflight = await send({
        method: 'OPTIONS',
        path: '/wwwroot/api/index/transaction',
        headers: {
          origin: 'https://app.example',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type',
        },
      });
      expectHttp2(preflight);
      expect(preflight.status).toBeLessThan(300);
      expect(preflight.headers['access-control-allow-methods']).toMatch(/POST/);
      const other = await send({ path: '/wwwroot/api/index/guid', headers: { origin: 'https://elsewhere.example' } });
      expect(other.headers['access-control-allow-origin']).toBe('*');
      expect(other.headers).not.toHaveProperty('access-control-allow-credentials');
    },
  ],
];

describe('every route family over HTTP/2 on the TLS port', () => {
  describe("Node's http2 client (one connection, bodies streamed without Content-Length)", () => {
    let client: ReturnType<typeof nodeHttp2Client>;
    beforeAll(() => {
      client = nodeHttp2Client(tlsUrl);
    });
    afterAll(() => client.close());
    for (const [name, run] of families) it(name, () => run(client.send));

    it('advertises Kestrel:Limits:Http2:MaxStreamsPerConnection as its concurrent-stream limit, and negotiated h2', async () => {
      await client.send({ path: '/index.html' });
      expect(client.session.alpnProtocol).toBe('h2');
      expect(client.session.remoteSettings.maxConcurrentStreams).toBe(7);
    });
  });

  describe('curl --http2', () => {
    for (const [name, run] of families) it(name, () => run(curlClient(tlsUrl)));
  });
});

describe('one TLS port, both protocols by ALPN', () => {
  it('answers HTTP/1.1 clients on the same port with the same pipeline, and over-long headers with 431', async () => {
    const h1 = https1Client(tlsUrl);
    const r = await h1({ path: '/view/SYS/SYS010.html' });
    expect(r.version).toBe('1.1');
    expect(r.status).toBe(200);
    expect(r.text).toContain('contract screen');
    expect(r.headers['x-content-type-options']).toBe('nosniff');
    expect((await h1({ path: '/index.html', headers: { 'x-big': 'a'.repeat(20_000) } })).status).toBe(431);
    const curl1 = await curlClient(tlsUrl, { http1: true })({ path: '/shared-files/manifest' });
    expect(curl1.version).toBe('1.1');
    expect(JSON.parse(curl1.text)).toEqual([{ requestPath: '/shared/theme.css' }]);
  });
});

import fs from 'node:fs';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import type { AckModuleFactory } from '../modules/contract.js';
import {
  CONNECTION_SPECIFIC_HEADERS,
  curlClient,
  https1Client,
  makeTestCertificate,
  moduleFiles,
  nodeHttp2Client,
  probeModule,
  testAppSettings,
  useTestHosts,
  waitFor,
} from '../test-support/index.js';

// The HTTP/2 adapter (pipeline/http2-adapter.ts): Express middleware and routes written for
// HTTP/1.1 run unchanged on HTTP/2 streams. docs/protocols.md.

const hosts = useTestHosts();
const clients: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
});

/** Routes that use the HTTP/1 habits the adapter must absorb. */
const habits: AckModuleFactory = () => {
  const router = express.Router();
  router.get('/connection-headers', (_req, res) => {
    res.setHeader('Connection', 'close');
    res.setHeader('Keep-Alive', 'timeout=5');
    res.setHeader('Transfer-Encoding', 'chunked');
    res.setHeader('Upgrade', 'h2c');
    res.setHeader('X-Kept', 'yes');
    res.send('headers were set');
  });
  router.get('/write-head', (_req, res) => {
    res.writeHead(201, 'Created Here', { connection: 'keep-alive', 'content-type': 'text/plain', 'x-kept': 'yes' });
    res.end('written');
  });
  router.get('/write-head-list', (_req, res) => {
    // The flat [name, value, ...] form Node also takes.
    res.writeHead(202, [
      'Connection',
      'keep-alive',
      'Content-Type',
      'text/plain',
      'X-Kept',
      'yes',
      'X-Twice',
      'a',
      'X-Twice',
      'b',
    ]);
    res.end('written');
  });
  router.get('/request', (req, res) => {
    res.json({
      hostname: req.hostname,
      protocol: req.protocol,
      secure: req.secure,
      httpVersion: req.httpVersion,
      ip: req.ip,
      path: req.path,
      query: req.query,
    });
  });
  router.post('/echo', express.text({ type: '*/*', limit: '1mb' }), (req, res) =>
    res.json({ length: String(req.body ?? '').length }),
  );
  return { routes: [{ mount: '/habits/api', handler: router }] };
};

async function start(extra: Record<string, unknown> = {}, events: string[] = []) {
  const home = hosts.home(
    testAppSettings({
      AppSettings: {
        LoadModules: ['probe', 'habits'],
        ServerDevCertFilePath: 'dev.crt',
        ServerDevCertKeyFilePath: 'dev.key',
        ...extra,
      },
    }),
    moduleFiles(['probe', 'habits']),
  );
  makeTestCertificate(home.appDir);
  const { host } = await hosts.start(home, { probe: probeModule(events), habits }, {}, { tlsPort: 0 });
  const client = nodeHttp2Client(host.tlsUrl);
  clients.push(client);
  return { host, send: client.send };
}

describe('HTTP/2 adapter', () => {
  it('drops connection-specific headers set with setHeader or writeHead, keeps the rest', async () => {
    const { host, send } = await start();
    const statuses: Record<string, number> = {
      '/habits/api/connection-headers': 200,
      '/habits/api/write-head': 201,
      '/habits/api/write-head-list': 202,
    };
    for (const [path, status] of Object.entries(statuses)) {
      for (const r of [await send({ path }), await curlClient(host.tlsUrl)({ path })]) {
        expect(r.version).toBe('2');
        expect(r.status).toBe(status);
        expect(r.headers['x-kept']).toBe('yes');
        for (const name of CONNECTION_SPECIFIC_HEADERS) expect(r.headers).not.toHaveProperty(name);
        if (path.endsWith('list')) expect(r.headers['x-twice']).toMatch(/^a(, ?|\n)b$/);
      }
    }
    // HTTP/1.1 on the same port still gets them: the adapter only touches HTTP/2 responses.
    const h1 = await https1Client(host.tlsUrl)({ path: '/habits/api/connection-headers' });
    expect(h1.version).toBe('1.1');
    expect(h1.headers.connection).toBe('close');
  });

  it("adds the edge's headers to every HTTP/2 answer under the responder's own, over HTTP/1.1 on the same port too", async () => {
    const { host, send } = await start();
    const h1 = https1Client(host.tlsUrl);
    for (const r of [await send({ path: '/probe/api/own-headers' }), await h1({ path: '/probe/api/own-headers' })]) {
      expect(r.headers['x-frame-options']).toBe('DENY');
      expect(r.headers.vary).toBe('Origin, Accept');
      expect(r.headers['x-content-type-options']).toBe('nosniff');
    }
    for (const path of ['/probe-public', '/probe-static', '/probe/api/touch', '/missing']) {
      for (const r of [await send({ path }), await h1({ path })]) {
        expect(r.headers.vary, path).toBe('Origin');
        expect(r.headers['x-frame-options'], path).toBe('SAMEORIGIN');
      }
    }
  });

  it("gives a route's 304 only the edge headers RFC 9110 lists for a 304 (Vary), its 200 all, over both protocols", async () => {
    const { host, send } = await start();
    const h1 = https1Client(host.tlsUrl);
    for (const client of [send, h1]) {
      const full = await client({ path: '/probe/api/fresh' });
      expect(full.status).toBe(200);
      expect(full.headers['x-content-type-options']).toBe('nosniff');
      const again = await client({ path: '/probe/api/fresh', headers: { 'if-none-match': '"probe-fresh"' } });
      expect(again.status).toBe(304);
      expect(again.headers.etag).toBe('"probe-fresh"');
      expect(again.headers['cache-control']).toBe('no-cache');
      expect(again.headers.vary).toBe('Origin');
      for (const name of ['x-content-type-options', 'x-frame-options', 'referrer-policy', 'cross-origin-opener-policy'])
        expect(again.headers, `${again.version} ${name}`).not.toHaveProperty(name);
    }
  });

  it('runs express-session over HTTP/2 (its res._implicitHeader call), the session carried by its cookie', async () => {
    const { send } = await start();
    const first = await send({ path: '/probe/api/count' });
    expect(first.status).toBe(200);
    expect(JSON.parse(first.text)).toEqual({ count: 1 });
    const cookie = first.headers['set-cookie']!.split(';')[0]!;
    expect(first.headers['set-cookie']).toMatch(/; Secure/i);
    const second = await send({ path: '/probe/api/count', headers: { cookie } });
    expect(JSON.parse(second.text)).toEqual({ count: 2 });
  });

  it("gives Express's request the HTTP/2 request's host, scheme, client address and path", async () => {
    const { host, send } = await start();
    const port = new URL(host.tlsUrl).port;
    const r = await send({ path: '/habits/api/request?x=1' });
    expect(JSON.parse(r.text)).toEqual({
      hostname: '127.0.0.1',
      protocol: 'https',
      secure: true,
      httpVersion: '2.0',
      ip: '127.0.0.1',
      path: '/request',
      query: { x: '1' },
    });
    expect(port).not.toBe('');
  });

  it('reads a body streamed without Content-Length (HTTP/2 framing) in Express body parsers', async () => {
    const { send } = await start();
    const body = 'x'.repeat(100_000);
    const json = await send({
      method: 'POST',
      path: '/probe/api/json',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ body }),
    });
    expect(JSON.parse(json.text)).toEqual({ received: { body } });
    const text = await send({
      method: 'POST',
      path: '/habits/api/echo',
      headers: { 'content-type': 'text/plain' },
      body,
    });
    expect(JSON.parse(text.text)).toEqual({ length: 100_000 });
  });

  it('answers raw-phase and Express errors the same way over HTTP/2 (500 without the detail, 404 problem)', async () => {
    const { send } = await start({ RunningEnvironment: 'P' });
    const boom = await send({ path: '/probe/api/boom' });
    expect(boom.status).toBe(500);
    expect(boom.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(boom.text).not.toContain('secret internal detail');
    expect((await send({ path: '/probe-static' })).text).toBe('static:probe');
    expect((await send({ path: '/probe-public', method: 'HEAD' })).body.length).toBe(0);
  });

  it('finishes streams in flight at shut-down (GOAWAY) and closes', async () => {
    const events: string[] = [];
    const { host, send } = await start({}, events);
    const slow = send({ path: '/probe/api/slow?ms=400' });
    await waitFor(() => events.includes('slow:probe'), { message: 'the slow request to reach the module' });
    await host.close({ graceMs: 5_000 });
    expect(JSON.parse((await slow).text)).toEqual({ waited: 400 });
    expect(fs.existsSync(host.paths.entryBasePath)).toBe(true);
  });
});

import fs from 'node:fs';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import type { AckModuleFactory } from '../modules/contract.js';
import type { RawHandler } from '../http/exchange.js';
import { parseRequestPath } from '../http/request-path.js';
import { createHttp2StreamLane } from './http2-stream-lane.js';
import { runHandlers } from './run-handlers.js';
import { Http2StreamRequest, Http2StreamResponse } from './http2-stream.js';
import {
  makeTestCertificate,
  moduleFiles,
  nodeHttp2Client,
  testAppSettings,
  useTestHosts,
  type Reply,
} from '../test-support/index.js';

// The HTTP/2 stream lane (pipeline/http2-stream-lane.ts): which streams the raw phases answer on
// the stream API, and what its response does, over a real HTTP/2 (h2c) connection.

const hosts = useTestHosts();
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A server whose streams go to the lane over `phase`; a stream it leaves is answered 299 `left`. */
async function serve(phase: RawHandler) {
  const lane = createHttp2StreamLane({
    edge: {
      begin(req) {
        req.ack = {
          id: 'test',
          clientIp: '127.0.0.1',
          protocol: 'http',
          rawPath: req.url!.split('?')[0]!,
          path: parseRequestPath(req.url!.split('?')[0]!),
          rawQuery: '',
          startedAt: process.hrtime.bigint(),
        };
      },
      run: runHandlers,
    },
    phases: [phase],
    underRoute: (folded) => folded === '/api' || folded.startsWith('/api/'),
    respondError: (_err, _req, res) => {
      res.statusCode = 500;
      res.end('failed');
    },
  });
  const server = http2.createServer();
  server.on(
    'stream',
    (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders, _flags: number, rawHeaders: string[]) => {
      if (lane(stream, headers, rawHeaders)) return;
      stream.respond({ ':status': 299 });
      stream.end('left');
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const client = nodeHttp2Client(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  closers.push(() => client.close());
  return Object.assign(client.send, { session: client.session });
}

const taken: RawHandler = (req, res) => {
  res.setHeader('X-Lane', req instanceof Http2StreamRequest && res instanceof Http2StreamResponse ? 'stream' : 'other');
  res.end('taken');
};

const laneOf = (r: Reply) => (r.status === 299 ? 'left' : r.headers['x-lane']);

describe('the HTTP/2 stream lane', () => {
  it('takes a GET or HEAD without a body outside the route mounts, and leaves its nearest neighbours', async () => {
    const send = await serve(taken);
    expect(laneOf(await send({ path: '/file.txt' }))).toBe('stream');
    expect(laneOf(await send({ path: '/file.txt', method: 'HEAD' }))).toBe('stream');
    expect(laneOf(await send({ path: '/apix/file.txt' }))).toBe('stream');
    expect(laneOf(await send({ path: '/api/file.txt' }))).toBe('left');
    expect(laneOf(await send({ path: '/API' }))).toBe('left');
    expect(laneOf(await send({ path: '/file.txt', method: 'POST' }))).toBe('left');
    expect(laneOf(await send({ path: '/file.txt', method: 'OPTIONS' }))).toBe('left');
    // A GET with a body (Node's client ends a GET's stream with its headers unless told not to).
    const withBody = send.session.request({ ':path': '/file.txt' }, { endStream: false });
    withBody.end('a body');
    const status = await new Promise((resolve) => withBody.once('response', (h) => resolve(h[':status'])));
    withBody.resume();
    expect(status).toBe(299);
    expect(laneOf(await send({ path: '/file.txt', headers: { expect: '100-continue' } }))).toBe('left');
    // Header lists over 16 KiB are answered 431 by the compatibility path, as over HTTP/1.1.
    expect(laneOf(await send({ path: '/file.txt', headers: { 'x-big': 'a'.repeat(16 * 1024) } }))).toBe('left');
    expect(laneOf(await send({ path: '/file.txt', headers: { 'x-big': 'a'.repeat(15 * 1024) } }))).toBe('stream');
  });

  it('answers a HEAD without the body the handler writes, and drops connection-specific headers', async () => {
    const send = await serve((_req, res) => {
      res.setHeader('Connection', 'close');
      res.setHeader('Content-Type', 'text/plain');
      res.setHeader('Content-Length', 4);
      res.write('ab');
      res.end('cd');
    });
    const head = await send({ path: '/x', method: 'HEAD' });
    expect([head.status, head.text, head.headers['content-length'], head.headers.connection]).toEqual([
      200,
      '',
      '4',
      undefined,
    ]);
    const get = await send({ path: '/x' });
    expect([get.status, get.text, get.headers['content-type']]).toEqual([200, 'abcd', 'text/plain']);
  });

  it('writes a head given as a flat list, a repeated name as a list, and refuses headers after it', async () => {
    let late = '';
    const send = await serve((_req, res) => {
      res.writeHead(203, ['Content-Type', 'text/plain', 'Set-Cookie', 'a=1', 'Set-Cookie', 'b=2', 'Keep-Alive', 'x']);
      try {
        res.setHeader('X-Late', 'no');
      } catch (err) {
        late = (err as Error).message;
      }
      res.end('listed');
    });
    const r = await send({ path: '/x' });
    expect([r.status, r.text, r.headers['set-cookie'], r.headers['keep-alive'], r.headers['x-late']]).toEqual([
      203,
      'listed',
      'a=1\nb=2',
      undefined,
      undefined,
    ]);
    expect(late).toMatch(/X-Late/);
  });

  it('answers a handler that throws with the error responder, on the stream', async () => {
    const send = await serve(() => {
      throw new Error('boom');
    });
    const r = await send({ path: '/x' });
    expect([r.status, r.text]).toEqual([500, 'failed']);
  });

  it("is the host's way for static answers over HTTP/2; routes still reach Express", async () => {
    const certDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-lane-cert-'));
    closers.push(async () => fs.rmSync(certDir, { recursive: true, force: true }));
    const cert = makeTestCertificate(certDir);
    const kind: AckModuleFactory = () => {
      const router = express.Router();
      router.get('/kind', (req, res) => void res.send(req instanceof Http2StreamRequest ? 'stream' : 'express'));
      return { routes: [{ mount: '/kind/api', handler: router }], static: [taken] };
    };
    const home = hosts.home(
      testAppSettings({
        AppSettings: { LoadModules: ['kind'], ServerDevCertFilePath: cert.cert, ServerDevCertKeyFilePath: cert.key },
      }),
      moduleFiles(['kind']),
    );
    const running = await hosts.start(home, { kind }, {}, { tlsPort: 0 });
    const client = nodeHttp2Client(running.host.tlsUrl);
    closers.push(() => client.close());
    expect(laneOf(await client.send({ path: '/anything.txt' }))).toBe('stream');
    expect((await client.send({ path: '/kind/api/kind' })).text).toBe('express');
  });
});

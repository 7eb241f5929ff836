import fs from 'node:fs';
import http2 from 'node:http2';
import os from 'node:os';
import path from 'node:path';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  fuzzOptions,
  https1Client,
  makeTestCertificate,
  nodeHttp2Client,
  testAppSettings,
  useTestHosts,
  type Client,
  type Reply,
  type Send,
  type TestHost,
} from '@ack/host/test-support';
import { wwwrootModule } from './index.js';

// The raw phases answer HTTP/2 static requests on Node's stream API and HTTP/1.1 ones on
// `ServerResponse` (docs/pipeline.md "One exchange, two protocols"): the same requests, over both
// protocols on one TLS port with real clients, must get the same status, headers (but those
// that describe a connection, and Date), body and access line.

const hosts = useTestHosts();
const SCRIPT = 'console.log("same over both");\n'.repeat(200);
const BIG = Buffer.alloc(3 * 1024 * 1024 + 123, 0);
for (let i = 0; i < BIG.length; i++) BIG[i] = (i * 31 + (i >> 11)) & 0xff;
let certDir: string;
let cert: { cert: string; key: string };

beforeAll(() => {
  certDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-same-cert-'));
  cert = makeTestCertificate(certDir);
});
afterAll(() => fs.rmSync(certDir, { recursive: true, force: true }));

async function startHost(): Promise<TestHost> {
  const home = hosts.home(
    testAppSettings({
      AppSettings: {
        LoadModules: ['wwwroot'],
        UseResponseComression: true,
        UseHttpLogging: true,
        AccessLogFilePath: '../log/access.log',
        UseForwardProxy: true,
        ForwardProxyIP: ['127.0.0.1'],
        WithOrigins: ['https://app.example'],
        ServerDevCertFilePath: cert.cert,
        ServerDevCertKeyFilePath: cert.key,
      },
      AllowedHosts: 'localhost;127.0.0.1',
    }),
    {
      'modules/wwwroot/module.json': {
        ModuleID: 'wwwroot',
        ModuleConfig: { SharedFileConfigPath: '../config/shared.json' },
      },
      'modules/wwwroot/wwwroot/1k.txt': 'k'.repeat(1024),
      'modules/wwwroot/wwwroot/Mixed/CaseFile.txt': 'mixed case',
      'modules/wwwroot/wwwroot/docs/index.html': '<p>docs</p>',
      'modules/wwwroot/wwwroot/big.bin': BIG,
      'modules/wwwroot/wwwroot/empty.txt': '',
      'modules/wwwroot/wwwroot/app.js': SCRIPT,
      'modules/wwwroot/wwwroot/app.js.br': brotliCompressSync(SCRIPT),
      'modules/wwwroot/wwwroot/app.js.gz': gzipSync(SCRIPT),
      'config/shared.json': { items: [{ requestPath: '/shared/theme.css', hostFilePath: '../shared/theme.css' }] },
      'shared/theme.css': 'h1 { color: teal }',
    },
  );
  return hosts.start(home, { wwwroot: wwwrootModule }, {}, { tlsPort: 0 });
}

/** Headers that describe the connection or the moment, not the answer. */
const NOT_COMPARED = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);

function comparable(r: Reply): { status: number; headers: Record<string, string>; body: string } {
  const headers = Object.fromEntries(Object.entries(r.headers).filter(([name]) => !NOT_COMPARED.has(name)));
  return { status: r.status, headers, body: r.body.toString('base64') };
}

/** The same request for each protocol: HTTP/2 carries the host in `:authority`. */
function over(client: Client, h2: boolean, request: Send): Promise<Reply> {
  const { host, ...rest } = request.headers ?? {};
  const headers = host === undefined ? rest : h2 ? { ...rest, ':authority': host } : { ...rest, host };
  return client({ ...request, headers });
}

describe('static answers over HTTP/1.1 and HTTP/2', () => {
  it('are the same: status, headers, validators, body and access line', async () => {
    const running = await startHost();
    const h2 = nodeHttp2Client(running.host.tlsUrl);
    const h1 = https1Client(running.host.tlsUrl);
    try {
      const first = await h1({ path: '/1k.txt' });
      const etag = first.headers.etag!;
      const lastModified = first.headers['last-modified']!;
      const brEtag = (await h1({ path: '/app.js', headers: { 'accept-encoding': 'br' } })).headers.etag!;
      const requests: Send[] = [
        { path: '/1k.txt' },
        { path: '/1k.txt', method: 'HEAD' },
        { path: '/1k.txt', headers: { 'if-none-match': etag } },
        { path: '/1k.txt', headers: { 'if-none-match': '"other"' } },
        { path: '/1k.txt', headers: { 'if-modified-since': lastModified } },
        { path: '/1k.txt?v=3' },
        { path: '/mIXED/casefile.TXT' },
        { path: '/shared/theme.css' },
        { path: '/SHARED/Theme.css', method: 'HEAD' },
        { path: '/shared-files/manifest' },
        { path: '/no-such-file.txt' },
        { path: '/no-such-file.txt', method: 'HEAD' },
        { path: '/wwwroot/api/nothing', headers: { accept: 'application/json' } },
        { path: '/empty.txt' },
        { path: '/docs' },
        { path: '/docs/' },
        { path: '/%zz' },
        { path: '/..%2f..%2fetc/passwd' },
        { path: '/1k.txt', headers: { range: 'bytes=0-9' } },
        { path: '/1k.txt', headers: { range: 'bytes=-5' } },
        { path: '/1k.txt', headers: { range: 'bytes=5000-6000' } },
        { path: '/1k.txt', headers: { range: 'bytes=0-9', 'if-range': etag } },
        { path: '/1k.txt', headers: { range: 'bytes=0-9', 'if-range': '"old"' } },
        { path: '/big.bin' },
        { path: '/big.bin', method: 'HEAD' },
        { path: '/big.bin', headers: { range: 'bytes=1000000-1100000' } },
        { path: '/app.js', headers: { 'accept-encoding': 'br, gzip' } },
        { path: '/app.js', headers: { 'accept-encoding': 'gzip' } },
        { path: '/app.js', headers: { 'accept-encoding': 'br', 'if-none-match': brEtag } },
        { path: '/app.js', headers: { 'accept-encoding': 'br;q=0, gzip;q=0' } },
        { path: '/1k.txt', headers: { origin: 'https://app.example' } },
        { path: '/1k.txt', headers: { origin: 'https://elsewhere.example' } },
        { path: '/1k.txt', headers: { host: 'evil.example' } },
        { path: '/1k.txt', headers: { 'x-forwarded-for': '203.0.113.7', 'x-forwarded-proto': 'http' } },
      ];
      for (const [i, request] of requests.entries()) {
        const agent = (proto: string) => ({ ...request.headers, 'user-agent': `case-${i}-${proto}` });
        const one = await over(h1, false, { ...request, headers: agent('h1') });
        const label = `${request.method ?? 'GET'} ${request.path} ${JSON.stringify(request.headers ?? {})}`;
        const two = await over(h2.send, true, { ...request, headers: agent('h2') }).catch((err: Error) => {
          throw new Error(`${label}: ${err.message}`);
        });
        expect(one.version, label).toBe('1.1');
        expect(two.version, label).toBe('2');
        expect(comparable(two), label).toEqual(comparable(one));
      }
      await h2.close();
      await running.close();

      // At most one access line per request, the same but for the protocol, time, duration and id.
      // The file rolls daily: its name carries the date (access20260101.log).
      const logDir = path.join(running.home.home, 'log');
      const [file] = fs.readdirSync(logDir).filter((name) => name.startsWith('access'));
      const lines = fs.readFileSync(path.join(logDir, file!), 'utf8').trim().split('\n');
      const normal = (line: string) =>
        line
          .replace(/\[[^\]]+\]/, '[time]')
          .replace(/ HTTP\/(1\.1|2\.0)"/, ' HTTP"')
          .replace(/ \d+\.\d ms \[[^\]]+\]$/, ' ms [id]');
      for (const [i] of requests.entries()) {
        const [one, ...moreOne] = lines.filter((l) => l.includes(`"case-${i}-h1"`));
        const [two, ...moreTwo] = lines.filter((l) => l.includes(`"case-${i}-h2"`));
        expect(moreOne.length + moreTwo.length, String(i)).toBe(0);
        // Requests the edge refuses before its access handler (a bad encoding, a host not
        // allowed) have no line, over either protocol.
        expect(two === undefined, String(i)).toBe(one === undefined);
        if (one === undefined) continue;
        expect(one, String(i)).toContain(' HTTP/1.1" ');
        expect(two, String(i)).toContain(' HTTP/2.0" ');
        expect(normal(two!).replace('case-' + i + '-h2', 'case'), String(i)).toBe(
          normal(one!).replace('case-' + i + '-h1', 'case'),
        );
      }
    } finally {
      await h2.close();
    }
  }, 60_000);

  it('sends a large file whole to a slow HTTP/2 reader, within its flow-control window', async () => {
    const running = await startHost();
    // A small window: the host may send 16 KiB ahead of what the reader took, never more.
    const session = http2.connect(running.host.tlsUrl, {
      rejectUnauthorized: false,
      settings: { initialWindowSize: 16 * 1024 },
    });
    try {
      const stream = session.request({ ':path': '/big.bin' });
      const head = await new Promise<http2.IncomingHttpHeaders>((resolve) => stream.once('response', resolve));
      expect(head[':status']).toBe(200);
      stream.pause();
      // Held still for a while: the host must wait for the window, not give up or buffer past it.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(stream.readableLength).toBeLessThanOrEqual(16 * 1024);
      const chunks: Buffer[] = [];
      let received = 0;
      const body = new Promise<Buffer>((resolve, reject) => {
        stream.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          received += chunk.length;
          // A slow reader: a pause after every 256 KiB.
          if (received % (256 * 1024) < chunk.length) {
            stream.pause();
            setTimeout(() => stream.resume(), 20);
          }
        });
        stream.once('end', () => resolve(Buffer.concat(chunks)));
        stream.once('error', reject);
      });
      stream.resume();
      const whole = await body;
      expect(whole.length).toBe(BIG.length);
      expect(whole.equals(BIG)).toBe(true);
    } finally {
      session.close();
    }
  }, 60_000);

  it('keeps serving on a connection whose client reset a large file midway', async () => {
    const running = await startHost();
    const h2 = nodeHttp2Client(running.host.tlsUrl);
    try {
      const stream = h2.session.request({ ':path': '/big.bin' });
      await new Promise((resolve) => stream.once('data', resolve));
      stream.close(http2.constants.NGHTTP2_CANCEL);
      await new Promise((resolve) => stream.once('close', resolve));
      const next = await h2.send({ path: '/1k.txt' });
      expect(next.status).toBe(200);
      expect(next.text).toBe('k'.repeat(1024));
      const again = await h2.send({ path: '/big.bin' });
      expect(again.body.equals(BIG)).toBe(true);
    } finally {
      await h2.close();
    }
  }, 60_000);

  it('are the same for any path and validators a client sends (fuzz)', async () => {
    const running = await startHost();
    const h2 = nodeHttp2Client(running.host.tlsUrl);
    const h1 = https1Client(running.host.tlsUrl);
    try {
      const segment = fc.oneof(
        fc.constantFrom('1k.txt', '1K.TXT', 'Mixed', 'mixed', 'CaseFile.txt', 'docs', 'shared', 'theme.css'),
        fc.constantFrom(
          '',
          '.',
          '..',
          '%2e%2e',
          '%2f',
          '%zz',
          '%00',
          'app.js',
          'empty.txt',
          'shared-files',
          'manifest',
        ),
        fc.stringMatching(/^[a-zA-Z0-9._~%-]{0,12}$/),
      );
      const request = fc.record({
        // Only paths Node's HTTP/1.1 client sends as they are (it resolves `%2e%2e` and the like as a
        // URL); the HTTP/2 client sends every path as given.
        path: fc
          .array(segment, { minLength: 1, maxLength: 4 })
          .map((parts) => '/' + parts.join('/'))
          .filter((p) => URL.canParse('https://h' + p) && new URL('https://h' + p).pathname === p),
        method: fc.constantFrom('GET', 'HEAD'),
        headers: fc.record(
          {
            'if-none-match': fc.constantFrom('*', '"x"', 'W/"x", "y"'),
            'if-modified-since': fc.constantFrom('Thu, 01 Jan 2099 00:00:00 GMT', 'garbage'),
            range: fc.constantFrom('bytes=0-0', 'bytes=-1', 'bytes=5-2', 'items=0-1', 'bytes=0-1,4-5'),
            'accept-encoding': fc.constantFrom('br', 'gzip;q=0.5, br;q=0', '*', 'identity'),
          },
          { requiredKeys: [] },
        ),
      });
      await fc.assert(
        fc.asyncProperty(request, async (r) => {
          const one = await h1(r);
          const two = await h2.send(r);
          expect(comparable(two)).toEqual(comparable(one));
        }),
        fuzzOptions(60),
      );
    } finally {
      await h2.close();
    }
  }, 120_000);
});

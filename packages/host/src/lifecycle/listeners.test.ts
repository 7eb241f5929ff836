import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import http2 from 'node:http2';
import https from 'node:https';
import path from 'node:path';
import tls from 'node:tls';
import { describe, expect, it } from 'vitest';
import {
  curlClient,
  https1Client,
  makeTestCertificate,
  moduleFiles,
  nodeHttp2Client,
  probeModule,
  testAppSettings,
  useTestHosts,
  waitFor,
  type TestHome,
} from '../test-support/index.js';
import type { AckHost } from '../host.js';
import { SettingsError } from '../settings/load.js';
import { devCertificateFiles } from './dev-cert.js';

const hosts = useTestHosts();
let home: TestHome | undefined;

async function start(
  settings: Record<string, unknown>,
  sections: Record<string, unknown> = {},
  listen: { tlsPort?: number } = { tlsPort: 0 },
): Promise<AckHost> {
  home = hosts.home(
    testAppSettings({ AppSettings: { LoadModules: ['probe'], ...settings }, ...sections }),
    moduleFiles(['probe']),
  );
  makeTestCertificate(home.appDir);
  return (await hosts.start(home, { probe: probeModule() }, {}, listen)).host;
}

/** The SHA-256 fingerprint of the certificate a new TLS connection to `url` is given. */
function fingerprintOf(url: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = tls.connect(
      { host: hostname, port: Number(port), rejectUnauthorized: false, ALPNProtocols: ['h2'] },
      () => {
        resolve(socket.getPeerCertificate().fingerprint256);
        socket.end();
      },
    );
    socket.on('error', reject);
  });
}

function fingerprintOfFile(file: string): string {
  return new X509Certificate(fs.readFileSync(file)).fingerprint256;
}

describe('HTTPS listener (ServerDevCert*)', () => {
  it('serves the same pipeline over HTTPS from a PFX certificate, beside plain HTTP', async () => {
    const h = await start({ ServerDevCertFilePath: 'dev.pfx', ServerDevCertPassword: 'cert-pass' });
    expect(h.tlsUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const secure = await https1Client(h.tlsUrl)({ path: '/probe-public' });
    expect(secure).toMatchObject({ status: 200, text: 'public:probe' });
    expect((await fetch(`${h.url}/probe-public`)).status).toBe(200);
    // Cookies issued over HTTPS are Secure.
    const touched = await https1Client(h.tlsUrl)({ path: '/probe/api/touch' });
    expect(touched.headers['set-cookie']).toMatch(/; Secure/i);
  });

  it('takes a PEM certificate and key', async () => {
    const h = await start({ ServerDevCertFilePath: 'dev.crt', ServerDevCertKeyFilePath: 'dev.key' });
    expect((await https1Client(h.tlsUrl)({ path: '/probe-public' })).status).toBe(200);
  });

  it('does not start with a certificate that cannot be used: the error names the setting', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ ServerDevCertFilePath: 'missing.pfx' }, /^AppSettings:ServerDevCertFilePath: file not found: .*missing\.pfx$/],
      [
        { ServerDevCertFilePath: 'dev.pfx', ServerDevCertPassword: 'wrong' },
        /^AppSettings:ServerDevCertPassword: wrong password for .*dev\.pfx$/,
      ],
      [
        { ServerDevCertFilePath: 'dev.crt', ServerDevCertKeyFilePath: 'other.key' },
        /^AppSettings:ServerDevCertKeyFilePath: the key in .*other\.key does not match the certificate in .*dev\.crt$/,
      ],
    ];
    for (const [settings, message] of cases) {
      home = hosts.home(testAppSettings({ AppSettings: { LoadModules: [], ...settings } }));
      makeTestCertificate(home.appDir);
      makeTestCertificate(path.join(home.appDir, 'o'), 'other');
      fs.copyFileSync(path.join(home.appDir, 'o', 'other.key'), path.join(home.appDir, 'other.key'));
      const failed = await hosts.start(home).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(failed).toBeInstanceOf(SettingsError);
      expect((failed as Error).message).toMatch(message);
      expect((failed as Error).message).not.toContain('wrong"');
    }
  });

  it('makes the development certificate on first start when asked (RunningEnvironment D), mode 0600 under the home', async () => {
    home = hosts.home(
      testAppSettings({ AppSettings: { LoadModules: ['probe'], RunningEnvironment: 'D' } }),
      moduleFiles(['probe']),
    );
    const { host } = await hosts.start(home, { probe: probeModule() }, {}, { tlsPort: 0 });
    const files = devCertificateFiles(home.home);
    for (const file of [files.cert, files.key]) expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(await fingerprintOf(host.tlsUrl)).toBe(fingerprintOfFile(files.cert));
    const cert = new X509Certificate(fs.readFileSync(files.cert));
    expect(cert.subjectAltName).toContain('DNS:localhost');
    // A production host never makes one.
    const prod = hosts.home(testAppSettings({ AppSettings: { RunningEnvironment: 'P' } }));
    const failed = await hosts.start(prod, {}, {}, { tlsPort: 0 }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failed).toBeInstanceOf(SettingsError);
    expect((failed as Error).message).toMatch(/^AppSettings:ServerDevCertFilePath: no certificate configured/);
    expect(fs.existsSync(devCertificateFiles(prod.home).dir)).toBe(false);
  });
});

describe('shut-down of a TLS port', () => {
  it('closes idle HTTP/1.1 keep-alive and HTTP/2 connections at once, without waiting for the grace period', async () => {
    const h = await start({ ServerDevCertFilePath: 'dev.crt', ServerDevCertKeyFilePath: 'dev.key' });
    const agent = new https.Agent({ keepAlive: true, rejectUnauthorized: false });
    const status = await new Promise<number>((resolve, reject) => {
      https
        .get(`${h.tlsUrl}/probe-public`, { agent }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        })
        .on('error', reject);
    });
    expect(status).toBe(200);
    const idle = nodeHttp2Client(h.tlsUrl);
    expect((await idle.send({ path: '/probe-public' })).status).toBe(200);
    const sessionClosed = new Promise((resolve) => idle.session.once('close', resolve));
    // A grace period longer than the test's time-out: only closing idle connections lets this finish.
    await h.close({ graceMs: 120_000 });
    await sessionClosed;
    agent.destroy();
  });
});

describe('draining a retired worker (rolling restart)', () => {
  it('sends GOAWAY to HTTP/2 sessions and Connection: close to HTTP/1.1 while still serving what is in flight', async () => {
    const h = await start({ ServerDevCertFilePath: 'dev.crt', ServerDevCertKeyFilePath: 'dev.key' });
    const h2 = nodeHttp2Client(h.tlsUrl);
    expect((await h2.send({ path: '/probe-public' })).version).toBe('2');
    const goaway = new Promise<number>((resolve) => h2.session.once('goaway', (code: number) => resolve(code)));
    const slow = h2.send({ path: '/probe/api/slow?ms=1000' });
    // HTTP/1.1 kept alive, on the plain port and on the TLS port (ALPN http/1.1).
    const plainAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const tlsAgent = new https.Agent({ keepAlive: true, maxSockets: 1, rejectUnauthorized: false });
    const get = (url: string, agent: http.Agent) =>
      new Promise<{ status: number; connection: string | undefined; reused: boolean }>((resolve, reject) => {
        const req = (url.startsWith('https') ? https : http).get(url, { agent }, (res) => {
          res.resume();
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, reused: req.reusedSocket }),
          );
        });
        req.on('error', reject);
      });
    expect((await get(`${h.url}/probe-public`, plainAgent)).connection).toBe('keep-alive');
    expect((await get(`${h.tlsUrl}/probe-public`, tlsAgent)).connection).toBe('keep-alive');

    // The drain ends once no connection is left: the kept-alive ones hold it open until they leave.
    const closed = h.close({ graceMs: 10_000, drainMs: 60_000 });
    expect(await goaway).toBe(http2.constants.NGHTTP2_NO_ERROR);
    for (const [url, agent] of [
      [`${h.url}/probe-public`, plainAgent],
      [`${h.tlsUrl}/probe-public`, tlsAgent],
    ] as const) {
      expect(await get(url, agent)).toEqual({ status: 200, connection: 'close', reused: true });
    }
    const answered = await slow;
    expect(answered.status).toBe(200);
    expect(JSON.parse(answered.text)).toEqual({ waited: 1000 });
    await closed;
    plainAgent.destroy();
    tlsAgent.destroy();
  });
});

describe('Kestrel:Endpoints', () => {
  it('opens each endpoint: https with a PEM pair (h2 and http/1.1), https with a PFX for HTTP/1.1 only, and h2c', async () => {
    const h = await start(
      {},
      {
        Kestrel: {
          Endpoints: {
            Secure: { Url: 'https://127.0.0.1:0', Certificate: { Path: 'dev.crt', KeyPath: 'dev.key' } },
            Legacy: {
              Url: 'https://127.0.0.1:0',
              Protocols: 'Http1',
              Certificate: { Path: 'dev.pfx', Password: 'cert-pass' },
            },
            Cleartext: { Url: 'http://127.0.0.1:0', Protocols: 'Http2' },
          },
        },
      },
      {},
    );
    expect(h.tlsUrl).toBe('');
    const byName = Object.fromEntries(h.endpoints.map((e) => [e.name, e]));
    expect(Object.keys(byName).sort()).toEqual(['Cleartext', 'Legacy', 'Secure']);

    const secure = nodeHttp2Client(byName.Secure!.url);
    expect((await secure.send({ path: '/probe-public' })).text).toBe('public:probe');
    expect(secure.session.alpnProtocol).toBe('h2');
    await secure.close();
    expect((await https1Client(byName.Secure!.url)({ path: '/probe-public' })).version).toBe('1.1');

    // Protocols: Http1 offers no h2 in ALPN: curl --http2 falls back to HTTP/1.1.
    const legacy = await curlClient(byName.Legacy!.url)({ path: '/probe-public' });
    expect(legacy).toMatchObject({ version: '1.1', status: 200, text: 'public:probe' });

    // h2c with prior knowledge, as a proxy in front speaks it.
    const h2c = nodeHttp2Client(byName.Cleartext!.url);
    const viaNode = await h2c.send({ path: '/probe/api/touch' });
    expect(viaNode).toMatchObject({ version: '2', status: 200 });
    expect(viaNode.headers['set-cookie']).not.toMatch(/; Secure/i);
    await h2c.close();
    const viaCurl = await curlClient(byName.Cleartext!.url, { http2PriorKnowledge: true })({ path: '/probe-public' });
    expect(viaCurl).toMatchObject({ version: '2', status: 200, text: 'public:probe' });
  });

  it('refuses an endpoint Url it cannot read, naming the endpoint', async () => {
    home = hosts.home(testAppSettings({ Kestrel: { Endpoints: { Web: { Url: 'ftp://example:21' } } } }));
    const failed = await hosts.start(home).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failed).toBeInstanceOf(SettingsError);
    expect((failed as Error).message).toBe(
      'Kestrel:Endpoints:Web:Url: expected http://host:port or https://host:port, got "ftp://example:21"',
    );
  });
});

describe('certificate renewal', () => {
  it('takes a certificate replaced on disk for new connections; an open connection keeps working', async () => {
    const h = await start({ ServerDevCertFilePath: 'dev.crt', ServerDevCertKeyFilePath: 'dev.key' });
    const dir = home!.appDir;
    const before = fingerprintOfFile(path.join(dir, 'dev.crt'));
    const open = nodeHttp2Client(h.tlsUrl);
    expect((await open.send({ path: '/probe-public' })).status).toBe(200);
    const openSocket = open.session.socket as tls.TLSSocket;
    expect(openSocket.getPeerCertificate().fingerprint256).toBe(before);

    // A renewal as tools write it: new files beside, renamed over the old ones (key first).
    const renewed = makeTestCertificate(path.join(dir, 'renewed'), 'dev', 'localhost-renewed');
    fs.renameSync(renewed.key, path.join(dir, 'dev.key'));
    fs.renameSync(renewed.cert, path.join(dir, 'dev.crt'));
    const after = fingerprintOfFile(path.join(dir, 'dev.crt'));
    expect(after).not.toBe(before);

    let seen: string | undefined;
    await waitFor(async () => (seen = await fingerprintOf(h.tlsUrl)) === after, {
      timeout: 15_000,
      interval: 100,
      message: () => `new connections to get the renewed certificate (still ${seen})`,
    });
    expect(seen).toBe(after);

    // The connection opened before the renewal is still the same one, and still serves.
    expect(open.session.destroyed).toBe(false);
    expect((await open.send({ path: '/probe-public' })).text).toBe('public:probe');
    expect(openSocket.getPeerCertificate().fingerprint256).toBe(before);
    await open.close();
    const fresh = nodeHttp2Client(h.tlsUrl);
    expect((await fresh.send({ path: '/probe-public' })).status).toBe(200);
    expect((fresh.session.socket as tls.TLSSocket).getPeerCertificate().fingerprint256).toBe(after);
    await fresh.close();
  });

  it('keeps the running certificate when the replacement cannot be used, and says so in the log', async () => {
    const log = {
      Serilog: {
        WriteTo: [{ Name: 'File', Args: { path: '../log/app.log', buffered: false, rollingInterval: 'Infinite' } }],
      },
    };
    const h = await start({ ServerDevCertFilePath: 'dev.crt', ServerDevCertKeyFilePath: 'dev.key' }, log);
    const before = await fingerprintOf(h.tlsUrl);
    fs.writeFileSync(path.join(home!.appDir, 'dev.crt'), 'not a certificate');
    const logFile = path.join(home!.home, 'log', 'app.log');
    await waitFor(() => fs.readFileSync(logFile, 'utf8').includes('certificate change not applied'), {
      timeout: 15_000,
      interval: 100,
      message: 'the log to say the certificate change was not applied',
    });
    expect(fs.readFileSync(logFile, 'utf8')).toMatch(
      /certificate change not applied, the running certificate stays: AppSettings:ServerDevCertFilePath: .*dev\.crt is not a PEM certificate/,
    );
    expect(await fingerprintOf(h.tlsUrl)).toBe(before);
    const session = http2.connect(h.tlsUrl, { rejectUnauthorized: false });
    await new Promise<void>((resolve, reject) => session.once('connect', () => resolve()).once('error', reject));
    session.close();
  });
});

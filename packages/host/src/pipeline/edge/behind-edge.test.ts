import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import type tls from 'node:tls';
import { fileURLToPath } from 'node:url';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket, type ClientOptions } from 'ws';
import type { AckModuleFactory } from '../../modules/contract.js';
import {
  createTestHome,
  curlClient,
  freePort,
  makeTestCertificate,
  moduleFiles,
  probeModule,
  startTestHost,
  testAppSettings,
  type TestHost,
  waitFor,
} from '../../test-support/index.js';

// ack behind the edges shipped in examples/edge (docs/protocols.md): Caddy with HTTP/3 and nginx
// with HTTP/2, both run from the example files on free ports. ack trusts them through
// UseForwardProxy/ForwardProxyIP, so it sees the client's address and `https`. The client connects
// over IPv6 loopback (::1) and the edge reaches ack over 127.0.0.1, so the two addresses differ.

const EDGE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../../examples/edge');

/** What ack saw: the request context the edge phase made (client address, scheme) and the protocol. */
const seen: AckModuleFactory = () => ({
  public: [
    (req, res, next) => {
      if (req.ack.rawPath !== '/seen/api') return next();
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ clientIp: req.ack.clientIp, protocol: req.ack.protocol, httpVersion: req.httpVersion }));
    },
  ],
  // Echoes each message with what ack saw of the handshake (a WebSocket through the edge).
  upgrades: [
    {
      path: '/seen/socket',
      handler(socket, req) {
        socket.on('message', (data) =>
          socket.send(JSON.stringify({ echo: String(data), clientIp: req.ack.clientIp, protocol: req.ack.protocol })),
        );
      },
    },
  ],
});

let ack: TestHost;
let upstream: string;
let work: string;
const children: ChildProcess[] = [];

/** Waits until the edge answers over TLS on `port` (bounded, within the hook's time limit), or fails at once if it exits. */
async function waitForEdge(port: number, child: ChildProcess, output: () => string): Promise<void> {
  const answers = () =>
    new Promise<boolean>((resolve) => {
      const req = https.get(
        {
          host: '::1',
          port,
          path: '/seen/api',
          servername: 'localhost',
          rejectUnauthorized: false,
          agent: false,
          timeout: 2_000,
        },
        (res) => {
          res.resume();
          resolve(res.statusCode === 200);
        },
      );
      req.on('error', () => resolve(false));
      req.on('timeout', () => req.destroy());
    });
  await waitFor(async () => child.exitCode !== null || (await answers()), {
    timeout: 30_000,
    interval: 200,
    message: () => `the edge to answer on port ${port}; its output:\n${output()}`,
  });
  if (child.exitCode !== null) throw new Error(`edge exited (${child.exitCode}):\n${output()}`);
}

function startChild(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
): { child: ChildProcess; output: () => string } {
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  children.push(child);
  return { child, output: () => out };
}

interface Http3Reply {
  alpn: string;
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** One GET over HTTP/3 with ngtcp2's gtlsclient: headers from its log, the body from its download folder. */
function http3Get(port: number, requestPath: string): Promise<Http3Reply> {
  const dir = fs.mkdtempSync(path.join(work, 'h3-'));
  const args = [
    '--exit-on-all-streams-close',
    '--no-quic-dump',
    '--no-http-dump',
    `--download=${dir}`,
    '--timeout=20s',
    '--sni=localhost',
    '::1',
    String(port),
    `https://localhost:${port}${requestPath}`,
  ];
  return new Promise((resolve, reject) => {
    execFile('gtlsclient', args, { maxBuffer: 16 * 1024 * 1024, timeout: 60_000 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`gtlsclient failed: ${err.message}\n${stderr.slice(-2000)}`));
      const log = stdout + stderr;
      const headers: Record<string, string> = {};
      for (const m of log.matchAll(/^http: stream 0x0 \[(:?[^:\]]+): (.*)\]$/gm)) headers[m[1]!.toLowerCase()] = m[2]!;
      const files = fs.readdirSync(dir);
      resolve({
        alpn: /Negotiated ALPN is (\S+)/.exec(log)?.[1] ?? '',
        status: Number(headers[':status']),
        headers,
        body: files.length === 1 ? fs.readFileSync(path.join(dir, files[0]!), 'utf8') : '',
      });
    });
  });
}

beforeAll(async () => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-edge-'));
  const home = createTestHome(
    testAppSettings({
      AppSettings: { LoadModules: ['seen', 'probe'], UseForwardProxy: true, ForwardProxyIP: ['127.0.0.1'] },
    }),
    moduleFiles(['seen', 'probe']),
  );
  ack = await startTestHost(home, { seen, probe: probeModule() });
  upstream = new URL(ack.url).host;
});

afterAll(async () => {
  for (const child of children) {
    if (child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
  }
  await ack?.close();
  ack?.home.remove();
  fs.rmSync(work, { recursive: true, force: true });
});

describe('behind Caddy (examples/edge/Caddyfile)', () => {
  let port: number;
  beforeAll(async () => {
    port = await freePort({ host: '::', udp: true });
    const dataHome = path.join(work, 'caddy');
    const caddy = startChild('caddy', ['run', '--config', path.join(EDGE, 'Caddyfile'), '--adapter', 'caddyfile'], {
      ACK_EDGE_HOST: 'localhost',
      ACK_EDGE_HTTPS_PORT: String(port),
      ACK_EDGE_HTTP_PORT: String(await freePort({ host: '::', udp: true })),
      ACK_EDGE_ADMIN: 'off',
      ACK_UPSTREAM: upstream,
      // Caddy's storage (its local CA and certificates) and autosaved config, in the temp folder.
      XDG_DATA_HOME: dataHome,
      XDG_CONFIG_HOME: dataHome,
      HOME: dataHome,
    });
    await waitForEdge(port, caddy.child, caddy.output);
  });

  it('is formatted as caddy fmt writes it: Caddy starts without a "not formatted" warning', async () => {
    const file = path.join(EDGE, 'Caddyfile');
    const formatted = await new Promise<string>((resolve, reject) =>
      execFile('caddy', ['fmt', file], (err, stdout) => (err ? reject(err) : resolve(stdout))),
    );
    expect(fs.readFileSync(file, 'utf8')).toBe(formatted);
  });

  it('delivers a response from ack over HTTP/3, and ack saw https and the client address', async () => {
    const r = await http3Get(port, '/seen/api');
    expect(r.alpn).toBe('h3');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/^application\/json/);
    // The client (::1) reached Caddy over QUIC; Caddy reached ack over HTTP/1.1 from 127.0.0.1.
    expect(JSON.parse(r.body)).toEqual({ clientIp: '::1', protocol: 'https', httpVersion: '1.1' });
  });

  it('gives Secure cookies over HTTP/3 (Express trusts the edge as the edge phase does) and announces HTTP/3 to HTTP/2 clients (Alt-Svc)', async () => {
    const touched = await http3Get(port, '/probe/api/touch');
    expect(touched.status).toBe(200);
    expect(touched.headers['set-cookie']).toMatch(/; Secure/i);
    const h2 = await curlClient(`https://localhost:${port}`, { connectTo: `localhost:${port}:[::1]` })({
      path: '/seen/api',
    });
    expect(h2.version).toBe('2');
    expect(h2.headers['alt-svc']).toMatch(new RegExp(`h3=":${port}"`));
    expect(JSON.parse(h2.text)).toMatchObject({ clientIp: '::1', protocol: 'https' });
  });

  it('carries a WebSocket round trip through Caddy to a module of ack', async () => {
    // ws hands its options on to tls.connect, whose `servername` its type leaves out.
    const options: ClientOptions & Pick<tls.ConnectionOptions, 'servername'> = {
      rejectUnauthorized: false,
      servername: 'localhost',
    };
    const socket = new WebSocket(`wss://localhost:${port}/seen/socket`, options);
    await once(socket, 'open');
    const reply = once(socket, 'message');
    socket.send('ping through the edge');
    const [data] = (await reply) as [Buffer];
    socket.close();
    expect(JSON.parse(String(data))).toMatchObject({ echo: 'ping through the edge', protocol: 'https' });
  });

  it('does not let a client spoof its address through the edge', async () => {
    const r = await curlClient(`https://localhost:${port}`, { connectTo: `localhost:${port}:[::1]` })({
      path: '/seen/api',
      headers: { 'x-forwarded-for': '203.0.113.9', 'x-forwarded-proto': 'http' },
    });
    expect(JSON.parse(r.text)).toMatchObject({ clientIp: '::1', protocol: 'https' });
  });
});

describe('behind nginx (examples/edge/nginx.conf)', () => {
  let port: number;
  beforeAll(async () => {
    port = await freePort({ host: '::', udp: true });
    const dir = path.join(work, 'nginx');
    fs.mkdirSync(dir, { recursive: true });
    const cert = makeTestCertificate(dir);
    const replace = (text: string, from: string, to: string) => {
      if (!text.includes(from)) throw new Error(`examples/edge/nginx.conf no longer contains "${from}"`);
      return text.replace(from, to);
    };
    let conf = fs.readFileSync(path.join(EDGE, 'nginx.conf'), 'utf8');
    conf = replace(conf, 'listen 443 ssl http2;', `listen 127.0.0.1:${port} ssl http2;`);
    conf = replace(conf, 'listen [::]:443 ssl http2;', `listen [::1]:${port} ssl http2;`);
    conf = replace(conf, '/etc/ssl/ack/fullchain.pem', cert.cert);
    conf = replace(conf, '/etc/ssl/ack/privkey.pem', cert.key);
    conf = replace(conf, 'server 127.0.0.1:8421;', `server ${upstream};`);
    conf = replace(conf, 'worker_processes auto;', `worker_processes 1;\npid ${dir}/nginx.pid;`);
    conf = replace(
      conf,
      'http {',
      `http {\n    access_log off;\n    client_body_temp_path ${dir}/body;\n    proxy_temp_path ${dir}/proxy;\n    fastcgi_temp_path ${dir}/fastcgi;\n    uwsgi_temp_path ${dir}/uwsgi;\n    scgi_temp_path ${dir}/scgi;`,
    );
    fs.writeFileSync(path.join(dir, 'nginx.conf'), conf);
    const nginx = startChild(fs.existsSync('/usr/sbin/nginx') ? '/usr/sbin/nginx' : 'nginx', [
      '-p',
      dir,
      '-e',
      path.join(dir, 'error.log'),
      '-c',
      path.join(dir, 'nginx.conf'),
      '-g',
      'daemon off;',
    ]);
    await waitForEdge(
      port,
      nginx.child,
      () =>
        nginx.output() +
        (fs.existsSync(path.join(dir, 'error.log')) ? fs.readFileSync(path.join(dir, 'error.log'), 'utf8') : ''),
    );
  });

  it('delivers a response from ack over HTTP/2, and ack saw https, the client address and gives Secure cookies', async () => {
    const send = curlClient(`https://[::1]:${port}`);
    const r = await send({ path: '/seen/api', headers: { 'x-forwarded-for': '203.0.113.9' } });
    expect(r.version).toBe('2');
    expect(JSON.parse(r.text)).toEqual({ clientIp: '::1', protocol: 'https', httpVersion: '1.1' });
    const touched = await send({ path: '/probe/api/touch' });
    expect(touched.headers['set-cookie']).toMatch(/; Secure/i);
  });
});

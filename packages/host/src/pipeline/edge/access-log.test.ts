import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AckModuleFactory } from '../../modules/contract.js';
import { moduleFiles, probeModule, rawConnection, testAppSettings, useTestHosts } from '../../test-support/index.js';
import { makeTestCertificate, nodeHttp2Client } from '../../test-support/protocols.js';
import { combinedDate } from './access-log.js';

const hosts = useTestHosts();

/** Date, client, user, request line, status, bytes, referrer, user agent, duration, id. */
const COMBINED =
  /^(\S+) - (\S+) \[(\d{2}\/[A-Z][a-z]{2}\/\d{4}:\d{2}:\d{2}:\d{2} [+-]\d{4})\] "(\S+) (\S+) HTTP\/1\.1" (\d{3}) (\d+|-) "((?:[^"\\]|\\.)*)" "((?:[^"\\]|\\.)*)" (\d+\.\d) ms \[([^\]]+)\]$/;

describe('the access line', () => {
  it('is combined-like, in its own rolling file when AccessLogFilePath is set, and in the host log with its label', async () => {
    const home = hosts.home(
      testAppSettings({
        AppSettings: { LoadModules: ['probe'], UseHttpLogging: true, AccessLogFilePath: '../log/access.log' },
        Serilog: {
          WriteTo: [
            {
              Name: 'File',
              Args: { path: '../log/app.log', outputTemplate: '{Level:u3} {Module}: {Message:lj}{NewLine}' },
            },
          ],
        },
      }),
      moduleFiles(['probe']),
    );
    const running = await hosts.start(home, { probe: probeModule() });
    const res = await fetch(`${running.url}/probe-static?token=secret`, {
      headers: { Referer: 'http://example.test/from "here"', 'User-Agent': 'Tester/1.0 (x)' },
    });
    const body = await res.text();
    await fetch(`${running.url}/nothing`, { method: 'HEAD' });
    await running.close();

    const lines = fs
      .readFileSync(path.join(home.home, 'log', 'access.log'), 'utf8')
      .trim()
      .split('\n');
    expect(lines).toHaveLength(2);
    const m = COMBINED.exec(lines[0]!);
    expect(m, lines[0]).not.toBeNull();
    const [, client, user, date, method, target, status, bytes, referrer, agent, , id] = m!;
    expect([client, user, method, target, status]).toEqual(['127.0.0.1', '-', 'GET', '/probe-static', '200']);
    expect(bytes).toBe(String(Buffer.byteLength(body)));
    expect(referrer).toBe('http://example.test/from \\"here\\"');
    expect(agent).toBe('Tester/1.0 (x)');
    expect(id).toMatch(/\S/);
    expect(
      Math.abs(Date.parse(date!.replace(/^(\d+)\/(\w+)\/(\d+):([\d:]+) (.+)$/, '$2 $1 $3 $4 $5')) - Date.now()),
    ).toBeLessThan(120_000);
    expect(lines[1]).toMatch(
      /^127\.0\.0\.1 - - \[[^\]]+\] "HEAD \/nothing HTTP\/1\.1" 404 - "-" "[^"]*" \d+\.\d ms \[[^\]]+\]$/,
    );
    expect(lines.join('\n')).not.toContain('secret');

    const app = fs.readFileSync(path.join(home.home, 'log', 'app.log'), 'utf8');
    expect(app).toMatch(/^INF http: 127\.0\.0\.1 - - \[.+"GET \/probe-static HTTP\/1\.1" 200/m);
    expect(app).toMatch(/^INF host: module probe loaded/m);
  });

  it('counts each body byte once over HTTP/2 as over HTTP/1.1, whether the body goes out with end, write or send', async () => {
    // 1024 bytes each: in end(), in two writes then end(), and through Express's send().
    const bytes: AckModuleFactory = (ctx) => {
      const router = ctx.host.createRouter();
      router.get('/end', (_req, res) => res.end(Buffer.alloc(1024, 97)));
      router.get('/write', (_req, res) => {
        res.write(Buffer.alloc(512, 98));
        res.write('c'.repeat(256));
        res.end('d'.repeat(256));
      });
      router.get('/send', (_req, res) => res.type('text/plain').send('é'.repeat(512)));
      return { routes: [{ mount: '/bytes', handler: router }] };
    };
    const home = hosts.home(
      testAppSettings({
        AppSettings: {
          LoadModules: ['bytes'],
          UseHttpLogging: true,
          AccessLogFilePath: '../log/access.log',
          ServerDevCertFilePath: 'dev.crt',
          ServerDevCertKeyFilePath: 'dev.key',
        },
      }),
      moduleFiles(['bytes']),
    );
    makeTestCertificate(home.appDir);
    const running = await hosts.start(home, { bytes }, {}, { tlsPort: 0 });
    const h2 = nodeHttp2Client(running.host.tlsUrl);
    for (const route of ['end', 'write', 'send']) {
      const reply = await h2.send({ path: `/bytes/${route}` });
      expect([reply.version, reply.status, reply.body.length]).toEqual(['2', 200, 1024]);
      const res = await fetch(`${running.url}/bytes/${route}`);
      expect((await res.arrayBuffer()).byteLength).toBe(1024);
    }
    await h2.close();
    await running.close();
    // Without a File sink to copy, the access file rolls daily: its name carries the date.
    const log = path.join(home.home, 'log');
    const file = fs.readdirSync(log).find((name) => /^access.*\.log$/.test(name))!;
    const lines = fs.readFileSync(path.join(log, file), 'utf8').trim().split('\n');
    const counted = lines.map((line) => /"GET (\S+) HTTP\/(\S+)" (\d+) (\S+)/.exec(line)!.slice(1).join(' '));
    expect(counted.sort()).toEqual(
      [
        '/bytes/end 2.0 200 1024',
        '/bytes/end 1.1 200 1024',
        '/bytes/write 2.0 200 1024',
        '/bytes/write 1.1 200 1024',
        '/bytes/send 2.0 200 1024',
        '/bytes/send 1.1 200 1024',
      ].sort(),
    );
  });

  it('is written for a request Node refuses before the host sees it, with the status Node answered', async () => {
    const home = hosts.home(
      testAppSettings({
        AppSettings: { LoadModules: ['probe'], UseHttpLogging: true, AccessLogFilePath: '../log/access.log' },
        Serilog: { WriteTo: [{ Name: 'File', Args: { path: '../log/app.log' } }] },
      }),
      moduleFiles(['probe']),
    );
    const running = await hosts.start(home, { probe: probeModule() });
    /** Sends one request head on its own connection; resolves with the answer once the host closes or answers. */
    const send = async (head: string) => {
      const raw = await rawConnection(running.url);
      raw.write(head);
      const answer = await raw.until(/\r\n\r\n/);
      raw.destroy();
      return answer;
    };
    const answers = [
      // A space in the target: the request line cannot be read.
      await send('GET /a b HTTP/1.1\r\nHost: x\r\n\r\n'),
      // A control character in a header value.
      await send('GET /probe-static?key=secret HTTP/1.1\r\nHost: x\r\nX-Bad: a\u0001b\r\n\r\n'),
      // Headers over the 16 KiB limit.
      await send(`GET /probe-static HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`),
      // Their neighbours, which Node lets through: the host answers them.
      await send('GET /probe-static HTTP/1.1\r\nHost: x\r\nX-Fine: a\tb\r\nConnection: close\r\n\r\n'),
      await send(`GET /probe-static HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(15_000)}\r\nConnection: close\r\n\r\n`),
    ];
    expect(answers.map((a) => a.split('\r\n')[0])).toEqual([
      'HTTP/1.1 400 Bad Request',
      'HTTP/1.1 400 Bad Request',
      'HTTP/1.1 431 Request Header Fields Too Large',
      'HTTP/1.1 200 OK',
      'HTTP/1.1 200 OK',
    ]);
    await running.close();
    const lines = fs
      .readFileSync(path.join(home.home, 'log', 'access.log'), 'utf8')
      .trim()
      .split('\n');
    const refused = (request: string, status: number) =>
      new RegExp(`^127\\.0\\.0\\.1 - - \\[[^\\]]+\\] "${request}" ${status} - "-" "-" - ms \\[[^\\]]+\\]$`);
    expect(lines).toHaveLength(5);
    expect(lines[0]).toMatch(refused('-', 400));
    expect(lines[1]).toMatch(refused('GET /probe-static HTTP/1\\.1', 400));
    expect(lines[2]).toMatch(refused('GET /probe-static HTTP/1\\.1', 431));
    expect(lines[3]).toMatch(COMBINED);
    expect(lines[4]).toMatch(COMBINED);
    expect(lines.join('\n')).not.toContain('secret');
    // Ids go on from the host's own sequence: every line has its own.
    expect(new Set(lines.map((l) => /\[([^\]]+)\]$/.exec(l)![1])).size).toBe(5);
  });

  it('is written for every answer the edge gives itself: a bad percent-encoding, a second Host, a declared body over the limit, a CORS preflight', async () => {
    const home = hosts.home(
      testAppSettings({
        AppSettings: {
          LoadModules: ['probe'],
          UseHttpLogging: true,
          AccessLogFilePath: '../log/access.log',
          WithOrigins: ['http://allowed.test'],
        },
        Kestrel: { Limits: { MaxRequestBodySize: 100 } },
        Serilog: { WriteTo: [{ Name: 'File', Args: { path: '../log/app.log' } }] },
      }),
      moduleFiles(['probe']),
    );
    const running = await hosts.start(home, { probe: probeModule() });
    const send = async (head: string) => {
      const raw = await rawConnection(running.url);
      raw.write(head);
      const answer = await raw.until(/\r\n\r\n/);
      raw.destroy();
      return answer.split('\r\n')[0];
    };
    const statuses = [
      await send('GET /probe-static/%zz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'),
      await send('GET /probe-static HTTP/1.1\r\nHost: x\r\nHost: y\r\nConnection: close\r\n\r\n'),
      await send('POST /probe-static HTTP/1.1\r\nHost: x\r\nContent-Length: 101\r\nConnection: close\r\n\r\n'),
      await send(
        'OPTIONS /probe-static HTTP/1.1\r\nHost: x\r\nOrigin: http://allowed.test\r\nAccess-Control-Request-Method: PUT\r\nConnection: close\r\n\r\n',
      ),
      // The neighbours the edge lets through: a good escape, one Host, a body at the limit.
      await send('GET /probe-static%41 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'),
      await send(
        `POST /probe-static HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\nConnection: close\r\n\r\n${'a'.repeat(100)}`,
      ),
    ];
    expect(statuses.slice(0, 4)).toEqual([
      'HTTP/1.1 400 Bad Request',
      'HTTP/1.1 400 Bad Request',
      'HTTP/1.1 413 Payload Too Large',
      'HTTP/1.1 204 No Content',
    ]);
    await running.close();
    const lines = fs
      .readFileSync(path.join(home.home, 'log', 'access.log'), 'utf8')
      .trim()
      .split('\n');
    expect(lines).toHaveLength(6);
    for (const line of lines) expect(line).toMatch(COMBINED);
    const seen = lines.map((l) => {
      const m = COMBINED.exec(l)!;
      return `${m[4]} ${m[5]} ${m[6]}`;
    });
    expect(seen.slice(0, 4)).toEqual([
      'GET /probe-static/%zz 400',
      'GET /probe-static 400',
      'POST /probe-static 413',
      'OPTIONS /probe-static 204',
    ]);
    expect(seen.slice(4).map((s) => s.split(' ').slice(0, 2).join(' '))).toEqual([
      'GET /probe-static%41',
      'POST /probe-static',
    ]);
  });

  it('leaves Node answering a refused request itself when access lines are off', async () => {
    const home = hosts.home(testAppSettings({ AppSettings: { LoadModules: ['probe'] } }), moduleFiles(['probe']));
    const running = await hosts.start(home, { probe: probeModule() });
    const raw = await rawConnection(running.url);
    raw.write('GET /a b HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(await raw.until(/\r\n\r\n/)).toBe('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    expect(await raw.closedWithin(5_000)).toBe(true);
  });

  it('writes the date as Apache does', () => {
    const d = new Date(2026, 10, 3, 4, 5, 6);
    const offset = -d.getTimezoneOffset();
    const sign = offset >= 0 ? '+' : '-';
    const hh = String(Math.floor(Math.abs(offset) / 60)).padStart(2, '0');
    const mm = String(Math.abs(offset) % 60).padStart(2, '0');
    expect(combinedDate(d)).toBe(`03/Nov/2026:04:05:06 ${sign}${hh}${mm}`);
  });
});

describe('the default Content-Security-Policy (IsEnabledCSP without a policy file)', () => {
  it('has no upgrade-insecure-requests over plain HTTP, and keeps it over HTTPS', async () => {
    const home = hosts.home(
      testAppSettings({
        AppSettings: {
          LoadModules: ['probe'],
          IsEnabledCSP: true,
          UseForwardProxy: true,
          ForwardProxyIP: ['127.0.0.1'],
        },
      }),
      moduleFiles(['probe']),
    );
    const { url } = await hosts.start(home, { probe: probeModule() });
    const plain = (await fetch(`${url}/probe-static`)).headers.get('content-security-policy');
    expect(plain).toContain("default-src 'self'");
    expect(plain).not.toContain('upgrade-insecure-requests');
    const secure = (
      await fetch(`${url}/probe-static`, {
        headers: { 'X-Forwarded-For': '203.0.113.9', 'X-Forwarded-Proto': 'https' },
      })
    ).headers.get('content-security-policy');
    expect(secure).toContain("default-src 'self'");
    expect(secure).toContain('upgrade-insecure-requests');
  });
});

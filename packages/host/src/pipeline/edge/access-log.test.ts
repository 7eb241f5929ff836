import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { moduleFiles, probeModule, testAppSettings, useTestHosts } from '../../test-support/index.js';
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

import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isTemporaryFileName } from '../fs/safe-write.js';
import { moduleFiles, probeModule, rawConnection, testAppSettings, useTestHosts } from '../test-support/index.js';

const hosts = useTestHosts();

async function start(limits: Record<string, unknown> = {}, appSettings: Record<string, unknown> = {}) {
  const home = hosts.home(testAppSettings({ AppSettings: { LoadModules: ['probe'], ...appSettings }, Kestrel: { Limits: limits } }), moduleFiles(['probe']));
  return { url: (await hosts.start(home, { probe: probeModule() })).url, home };
}

const post = (path: string, length: number) => `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;

describe('slow and greedy clients (Kestrel:Limits)', () => {
  it('closes the connection after an error answered before the body was read, instead of waiting for the body', async () => {
    const { url } = await start();
    const c = await rawConnection(url);
    // Headers promise 100,000 bytes that never come; the route does not exist.
    c.write(post('/probe/api/missing', 100_000));
    const reply = await c.until(/\r\n\r\n[\s\S]*"code"/);
    expect(reply).toMatch(/^HTTP\/1\.1 404/);
    expect(reply).toMatch(/\r\nConnection: close\r\n/i);
    expect(await c.closedWithin(10_000)).toBe(true);
  });

  it('keeps the connection for an error answered after the body was read', async () => {
    const { url } = await start();
    const c = await rawConnection(url);
    c.write(post('/probe/api/json', 3) + '{x}');
    const reply = await c.until(/\r\n\r\n\{/);
    expect(reply).toMatch(/^HTTP\/1\.1 400/);
    expect(reply).not.toMatch(/Connection: close/i);
    c.write('GET /probe-public HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(await c.until(/public:probe/)).toContain('public:probe');
    c.destroy();
  });

  it('answers 408 to a body that stalls or trickles below MinRequestBodyDataRate, and closes', async () => {
    const { url } = await start({ MinRequestBodyDataRate: { BytesPerSecond: 1000, GracePeriod: '00:00:01' } });
    const stalled = await rawConnection(url);
    stalled.write(post('/probe/api/json', 5000));
    const trickled = await rawConnection(url);
    trickled.write(post('/probe/api/json', 5000) + '{"a":"');
    const drip = setInterval(() => trickled.socket.writable && trickled.write('x'), 200);
    try {
      for (const c of [stalled, trickled]) {
        const reply = await c.until(/request\.body_too_slow/);
        expect(reply).toMatch(/^HTTP\/1\.1 408/);
        expect(reply).toMatch(/Connection: close/i);
        expect(await c.closedWithin(10_000)).toBe(true);
      }
    } finally {
      clearInterval(drip);
    }
    // A body sent at a normal pace is read and answered.
    const ok = await fetch(`${url}/probe/api/json`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ a: 'b'.repeat(5000) }) });
    expect(ok.status).toBe(200);
  });

  it('an upload cut for its slow body leaves no temporary file behind', async () => {
    const { url, home } = await start({ MinRequestBodyDataRate: { BytesPerSecond: 1000, GracePeriod: '00:00:01' } }, { UseContractSync: true, HostAccessID: 'access-id-for-tests' });
    const boundary = 'cut-upload';
    const head = ['moduleID=wwwroot', 'contractType=wwwroot', 'changeType=Created', 'destFilePath=HDS/page.html']
      .map((f) => f.split('='))
      .map(([n, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${n}"\r\n\r\n${v}\r\n`).join('')
      + `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="page.html"\r\nContent-Type: text/html\r\n\r\n`;
    const c = await rawConnection(url);
    c.write(`POST /contractsync HTTP/1.1\r\nHost: x\r\nhostAccessID: access-id-for-tests\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: 1000000\r\n\r\n${head}${'x'.repeat(2000)}`);
    expect(await c.until(/request\.body_too_slow/)).toMatch(/^HTTP\/1\.1 408/);
    expect(await c.closedWithin(10_000)).toBe(true);
    const temporary = () => fs.readdirSync(home.home, { recursive: true, encoding: 'utf8' }).filter((f) => isTemporaryFileName(f.split('/').pop()!));
    const until = Date.now() + 10_000;
    while (temporary().length > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    expect(temporary()).toEqual([]);
    expect(fs.existsSync(`${home.home}/contracts/wwwroot/HDS/page.html`)).toBe(false);
  });

  it('bounds the connections one client address holds (MaxConnectionsPerClient); others are served', async () => {
    const { url } = await start({ MaxConnectionsPerClient: 3 });
    const held = [];
    for (let i = 0; i < 3; i++) {
      const c = await rawConnection(url);
      c.write('GET /probe-public HTTP/1.1\r\nHost: x\r\n\r\n');
      expect(await c.until(/public:probe/)).toContain('public:probe');
      held.push(c);
    }
    const refused = await rawConnection(url);
    const reply = await refused.until(/too_many_connections/);
    expect(reply).toMatch(/^HTTP\/1\.1 429/);
    expect(await refused.closedWithin(10_000)).toBe(true);
    // Another client address (127.0.0.2 is loopback too on Linux) is not affected.
    const other = await rawConnection(url, { localAddress: '127.0.0.2' });
    other.write('GET /probe-public HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(await other.until(/public:probe/)).toMatch(/^HTTP\/1\.1 200/);
    // Once one closes, the client may open another.
    const closing = held.pop()!;
    closing.destroy();
    await closing.closed;
    // The host sees the close a moment after the client: try until it has (bounded).
    let answer = '';
    for (let attempt = 0; attempt < 50 && !answer.startsWith('HTTP/1.1 200'); attempt++) {
      const again = await rawConnection(url);
      again.write('GET /probe-public HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      answer = await again.until(/public:probe|too_many_connections/);
      again.destroy();
      if (!answer.startsWith('HTTP/1.1 200')) await again.closed;
    }
    expect(answer).toMatch(/^HTTP\/1\.1 200/);
    for (const c of held) c.destroy();
  });
});

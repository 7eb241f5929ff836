import fs from 'node:fs';
import http2 from 'node:http2';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { isTemporaryFileName } from '../fs/safe-write.js';
import {
  makeTestCertificate,
  moduleFiles,
  probeModule,
  rawConnection,
  testAppSettings,
  useTestHosts,
  waitFor,
} from '../test-support/index.js';

const hosts = useTestHosts();
const sessions: http2.ClientHttp2Session[] = [];
afterEach(() => {
  for (const s of sessions.splice(0)) s.destroy();
});

/**
 * A host with the probe module. `tls` adds the HTTPS listener (HTTP/2 and HTTP/1.1, `tlsUrl`) and
 * an h2c endpoint (`h2cUrl`), so that every kind of listener is there.
 */
async function start(limits: Record<string, unknown> = {}, appSettings: Record<string, unknown> = {}, tls = false) {
  const endpoints = tls ? { Endpoints: { Cleartext: { Url: 'http://127.0.0.1:0', Protocols: 'Http2' } } } : {};
  const certificate = tls ? { ServerDevCertFilePath: 'dev.crt', ServerDevCertKeyFilePath: 'dev.key' } : {};
  const home = hosts.home(
    testAppSettings({
      AppSettings: { LoadModules: ['probe'], ...certificate, ...appSettings },
      Kestrel: { Limits: limits, ...endpoints },
    }),
    moduleFiles(['probe']),
  );
  if (tls) makeTestCertificate(home.appDir);
  const { host, url } = await hosts.start(home, { probe: probeModule() }, {}, tls ? { tlsPort: 0 } : {});
  return { url, home, tlsUrl: host.tlsUrl, h2cUrl: host.endpoints.find((e) => e.name === 'Cleartext')?.url ?? '' };
}

/** An HTTP/2 connection (closed after the test); `localAddress` picks the client address. */
async function h2(url: string, localAddress?: string): Promise<http2.ClientHttp2Session> {
  // http2.connect hands its options on to net/tls.connect, whose `localAddress` its type leaves out.
  const options: http2.SecureClientSessionOptions & Pick<net.TcpSocketConnectOpts, 'localAddress'> = {
    rejectUnauthorized: false,
    localAddress,
  };
  const session = http2.connect(url, options);
  session.on('error', () => {});
  sessions.push(session);
  await new Promise<void>((resolve, reject) => {
    session.once('connect', () => resolve());
    session.once('close', () => reject(new Error('closed before connecting')));
  });
  return session;
}

/** One HTTP/2 request: its status, body, and whether its stream closed (reset or ended). */
function h2Request(session: http2.ClientHttp2Session, headers: http2.OutgoingHttpHeaders, body?: string) {
  const stream = session.request(headers, { endStream: false });
  stream.on('error', () => {});
  if (body !== undefined) stream.write(body);
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  const response = new Promise<{ status: number; text: string }>((resolve) => {
    let status = 0;
    stream.on('response', (h) => (status = Number(h[':status'])));
    stream.on('close', () => resolve({ status, text: Buffer.concat(chunks).toString('utf8') }));
  });
  return { stream, response };
}

/** Opens an HTTP/2 connection and asks for a page: the status it got (0: closed unanswered). */
async function refusedH2(url: string): Promise<number> {
  const session = http2.connect(url, { rejectUnauthorized: false });
  session.on('error', () => {});
  sessions.push(session);
  const closed = new Promise((resolve) => session.once('close', resolve));
  const { stream, response } = h2Request(session, { ':path': '/probe-public' });
  stream.end();
  await closed;
  return (await response).status;
}

const h2Get = async (session: http2.ClientHttp2Session, path: string) => {
  const { stream, response } = h2Request(session, { ':path': path });
  stream.end();
  return response;
};

const post = (path: string, length: number) =>
  `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;

/** The start of a contract-sync upload whose file never finishes (2,000 bytes of it). */
const CUT_UPLOAD = (() => {
  const boundary = 'cut-upload';
  const fields = ['moduleID=wwwroot', 'contractType=wwwroot', 'changeType=Created', 'destFilePath=HDS/page.html']
    .map((f) => f.split('='))
    .map(([n, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${n}"\r\n\r\n${v}\r\n`)
    .join('');
  const file = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="page.html"\r\nContent-Type: text/html\r\n\r\n`;
  return { type: `multipart/form-data; boundary=${boundary}`, start: fields + file + 'x'.repeat(2000) };
})();

async function expectNoUploadLeft(home: string) {
  const temporary = () =>
    fs.readdirSync(home, { recursive: true, encoding: 'utf8' }).filter((f) => isTemporaryFileName(f.split('/').pop()!));
  await waitFor(() => temporary().length === 0);
  expect(fs.existsSync(`${home}/contracts/wwwroot/HDS/page.html`)).toBe(false);
}

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

  it('reads and discards a body still coming after such an error (lingering close), so the client sees the answer, not a reset', async () => {
    const { url } = await start();
    // Half-open, as a client still sending its body is after the host's answer and FIN.
    const socket = net.connect({ port: Number(new URL(url).port), host: '127.0.0.1', allowHalfOpen: true });
    let error: Error | undefined;
    const failed = new Promise<void>((resolve) =>
      socket.on('error', (e) => {
        error = e;
        resolve();
      }),
    );
    let text = '';
    socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
    const ended = new Promise<void>((resolve) => socket.once('end', () => resolve()));
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    const chunk = Buffer.alloc(16 * 1024, 'x');
    socket.write(post('/probe/api/missing', 32 * chunk.length));
    await ended; // the whole answer, then the host's FIN
    expect(text).toMatch(/^HTTP\/1\.1 404[\s\S]*Connection: close[\s\S]*"code"/i);
    for (let i = 0; i < 32; i++) {
      await new Promise<void>((resolve) => socket.write(chunk, () => resolve()));
      await new Promise((r) => setTimeout(r, 5)); // a body still arriving, not all at once
    }
    // What must NOT happen has no event of its own: a host that closed instead of reading answers the
    // last chunks with a reset, which comes back at once over loopback. Give it a bounded moment to
    // (before our own FIN ends the connection), and fail as soon as it does.
    await Promise.race([failed, new Promise((r) => setTimeout(r, 200))]);
    expect(error).toBeUndefined();
    socket.end();
    await Promise.race([closed, failed]);
    expect(error).toBeUndefined();
  });

  it('keeps discarding a body that goes on steadily past the 2 s idle limit of that lingering close', async () => {
    const { url } = await start();
    const socket = net.connect({ port: Number(new URL(url).port), host: '127.0.0.1', allowHalfOpen: true });
    let error: Error | undefined;
    const failed = new Promise<void>((resolve) =>
      socket.on('error', (e) => {
        error = e;
        resolve();
      }),
    );
    socket.resume();
    const ended = new Promise<void>((resolve) => socket.once('end', () => resolve()));
    socket.write(post('/probe/api/missing', 4000));
    await ended;
    // The scenario itself is timed: 1,000 bytes every 1.5 s (above MinRequestBodyDataRate), so
    // 6 s in all but never 2 s without data. A reset ends the wait at once.
    for (let i = 0; i < 4 && error === undefined; i++) {
      await Promise.race([failed, new Promise((r) => setTimeout(r, 1500))]);
      socket.write(Buffer.alloc(1000, 'x'));
    }
    // A reset for the last chunk, if the host had stopped reading, comes back at once: a bounded
    // moment for what must not happen, ended early if it does.
    await Promise.race([failed, new Promise((r) => setTimeout(r, 300))]);
    expect(error).toBeUndefined();
    socket.destroy();
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
    const ok = await fetch(`${url}/probe/api/json`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ a: 'b'.repeat(5000) }),
    });
    expect(ok.status).toBe(200);
  });

  it('an upload cut for its slow body leaves no temporary file behind', async () => {
    const { url, home } = await start(
      { MinRequestBodyDataRate: { BytesPerSecond: 1000, GracePeriod: '00:00:01' } },
      { UseContractSync: true, HostAccessID: 'access-id-for-tests' },
    );
    const c = await rawConnection(url);
    c.write(
      `POST /contractsync HTTP/1.1\r\nHost: x\r\nhostAccessID: access-id-for-tests\r\nContent-Type: ${CUT_UPLOAD.type}\r\nContent-Length: 1000000\r\n\r\n${CUT_UPLOAD.start}`,
    );
    expect(await c.until(/request\.body_too_slow/)).toMatch(/^HTTP\/1\.1 408/);
    expect(await c.closedWithin(10_000)).toBe(true);
    await expectNoUploadLeft(home.home);
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

describe('slow and greedy clients over HTTP/2 and TLS', () => {
  it('answers 408 to an HTTP/2 stream whose body stalls, resets that stream only, and keeps the connection', async () => {
    const { tlsUrl } = await start(
      { MinRequestBodyDataRate: { BytesPerSecond: 1000, GracePeriod: '00:00:01' } },
      {},
      true,
    );
    const session = await h2(tlsUrl);
    const stalled = h2Request(
      session,
      { ':method': 'POST', ':path': '/probe/api/json', 'content-type': 'application/json', 'content-length': '5000' },
      '{"a":"',
    );
    const reply = await stalled.response;
    expect(reply.status).toBe(408);
    expect(reply.text).toContain('request.body_too_slow');
    // The same connection serves the next request: only the stream was ended.
    expect(session.closed || session.destroyed).toBe(false);
    expect(await h2Get(session, '/probe-public')).toEqual({ status: 200, text: 'public:probe' });
    // A body sent at a normal pace on the same connection is read and answered.
    const ok = h2Request(session, {
      ':method': 'POST',
      ':path': '/probe/api/json',
      'content-type': 'application/json',
    });
    ok.stream.end(JSON.stringify({ a: 'b'.repeat(5000) }));
    expect((await ok.response).status).toBe(200);
  });

  it('an HTTP/2 upload cut for its slow body leaves no temporary file behind', async () => {
    const { tlsUrl, home } = await start(
      { MinRequestBodyDataRate: { BytesPerSecond: 1000, GracePeriod: '00:00:01' } },
      { UseContractSync: true, HostAccessID: 'access-id-for-tests' },
      true,
    );
    const session = await h2(tlsUrl);
    const upload = h2Request(
      session,
      {
        ':method': 'POST',
        ':path': '/contractsync',
        hostaccessid: 'access-id-for-tests',
        'content-type': CUT_UPLOAD.type,
        'content-length': '1000000',
      },
      CUT_UPLOAD.start,
    );
    const reply = await upload.response;
    expect(reply.status).toBe(408);
    expect(reply.text).toContain('request.body_too_slow');
    await expectNoUploadLeft(home.home);
  });

  it('ends an HTTP/2 stream answered with an error before its body was read; the connection stays', async () => {
    const { tlsUrl, h2cUrl } = await start({ MaxRequestBodySize: 10_000 }, {}, true);
    for (const url of [tlsUrl, h2cUrl]) {
      const session = await h2(url);
      // 9,000 bytes promised, 1,000 sent; the route does not exist (the body is never read).
      const early = h2Request(
        session,
        {
          ':method': 'POST',
          ':path': '/probe/api/missing',
          'content-type': 'application/json',
          'content-length': '9000',
        },
        'x'.repeat(1000),
      );
      expect((await early.response).status, url).toBe(404);
      expect(early.stream.rstCode, url).toBe(http2.constants.NGHTTP2_NO_ERROR);
      // A body without a length, read until it passes MaxRequestBodySize: 413 while the client
      // still sends, and the stream is told to stop (the rest would be read only to be dropped).
      const over = h2Request(
        session,
        { ':method': 'POST', ':path': '/probe/api/json', 'content-type': 'application/json' },
        'x'.repeat(12_000),
      );
      const refused = await over.response;
      expect(refused.status, url).toBe(413);
      expect(refused.text).toContain('request.body_too_large');
      expect(over.stream.rstCode, url).toBe(http2.constants.NGHTTP2_NO_ERROR);
      expect(await h2Get(session, '/probe-public')).toEqual({ status: 200, text: 'public:probe' });
    }
  });

  it('counts MaxConnectionsPerClient over every listener: plain, TLS (HTTP/2) and h2c', async () => {
    const { url, tlsUrl, h2cUrl } = await start({ MaxConnectionsPerClient: 3 }, {}, true);
    const plain = await rawConnection(url);
    plain.write('GET /probe-public HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(await plain.until(/public:probe/)).toContain('public:probe');
    const held = [await h2(tlsUrl), await h2(h2cUrl)];
    for (const session of held) expect((await h2Get(session, '/probe-public')).status).toBe(200);
    // A fourth connection from the same address is closed, whichever listener it goes to.
    for (const target of [tlsUrl, h2cUrl]) expect(await refusedH2(target), target).toBe(0);
    const refused = await rawConnection(url);
    expect(await refused.until(/too_many_connections/)).toMatch(/^HTTP\/1\.1 429/);
    // Another client address is served.
    const other = await h2(tlsUrl, '127.0.0.2');
    expect((await h2Get(other, '/probe-public')).status).toBe(200);
    plain.destroy();
    refused.destroy();
  });

  it('closes an HTTP/2 connection that opens no stream within RequestHeadersTimeout, or none for KeepAliveTimeout, pings or not', async () => {
    const { tlsUrl, h2cUrl } = await start(
      { RequestHeadersTimeout: '00:00:01', KeepAliveTimeout: '00:00:02' },
      {},
      true,
    );
    for (const url of [tlsUrl, h2cUrl]) {
      // Connected, never asks for anything, but keeps the connection busy with PINGs.
      const silent = await h2(url);
      const pinging = setInterval(() => !silent.destroyed && silent.ping(() => {}), 200);
      const goaway = new Promise((resolve) => silent.once('goaway', resolve));
      try {
        await goaway;
        await new Promise((resolve) =>
          silent.closed || silent.destroyed ? resolve(undefined) : silent.once('close', resolve),
        );
      } finally {
        clearInterval(pinging);
      }
      // After a request, the same holds from the moment its stream closed.
      const used = await h2(url);
      expect((await h2Get(used, '/probe-public')).status).toBe(200);
      const usedPings = setInterval(() => !used.destroyed && used.ping(() => {}), 200);
      try {
        await new Promise((resolve) => used.once('goaway', resolve));
      } finally {
        clearInterval(usedPings);
      }
    }
  });

  it('closes a TLS connection whose handshake does not finish within RequestHeadersTimeout', async () => {
    const { tlsUrl } = await start({ RequestHeadersTimeout: '00:00:01' }, {}, true);
    const c = await rawConnection(tlsUrl.replace(/^https/, 'http'));
    // Half a hello, then nothing.
    c.write(Buffer.from([0x16, 0x03, 0x01, 0x00, 0x80]));
    expect(await c.closedWithin(15_000)).toBe(true);
  });
});

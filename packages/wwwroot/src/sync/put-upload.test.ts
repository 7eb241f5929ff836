import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http2 from 'node:http2';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isTemporaryFileName } from '@ack/host/serving';
import { rawConnection, testAppSettings, useTestHosts, waitFor, type TestHost } from '@ack/host/test-support';
import { wwwrootModule } from '../index.js';

// `PUT /wwwroot/api/sync/upload?moduleName=&changeType=&filePath=` with the file as the whole body
// (docs/wire-formats.md "Sync upload of one file"): the same refusals as the multipart upload, and
// the same atomic, flushed write.

const TOKEN = 'team-token-1';
const basic = (token: string) => `Basic ${Buffer.from(`${token}:`).toString('base64')}`;
const AUTH = basic(TOKEN);
const sha = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');
const hosts = useTestHosts();

interface Started extends TestHost {
  contracts: string;
}

async function start(
  options: { maxFileBytes?: number; maxBodyBytes?: number; maxFailedChecks?: number; tls?: boolean } = {},
): Promise<Started> {
  const home = hosts.home(
    testAppSettings({
      AppSettings: {
        LoadModules: ['wwwroot'],
        Security: {
          MaxContractSyncFileBytes: options.maxFileBytes ?? 10_485_760,
          ...(options.maxFailedChecks ? { MaxFailedAccessChecks: options.maxFailedChecks } : {}),
        },
      },
      ...(options.maxBodyBytes ? { Kestrel: { Limits: { MaxRequestBodySize: options.maxBodyBytes } } } : {}),
    }),
    {
      'modules/wwwroot/module.json': { ModuleID: 'wwwroot', ModuleConfig: { FileSyncTokens: [TOKEN] } },
      'contracts/wwwroot/HDS/page.html': '<p>v1</p>',
    },
  );
  const running = await hosts.start(home, { wwwroot: wwwrootModule }, {}, options.tls ? { tlsPort: 0 } : {});
  return { ...running, contracts: path.join(home.home, 'contracts', 'wwwroot') };
}

const target = (fields: Record<string, string>) =>
  `/wwwroot/api/sync/upload?${new URLSearchParams({ moduleName: 'wwwroot', changeType: 'Changed', ...fields })}`;

function put(
  host: Started,
  fields: Record<string, string>,
  body: Buffer | string | ReadableStream<Uint8Array>,
  headers: Record<string, string> = { Authorization: AUTH },
) {
  return fetch(`${host.url}${target(fields)}`, {
    method: 'PUT',
    body,
    headers,
    ...(body instanceof ReadableStream ? { duplex: 'half' } : {}),
  } as RequestInit);
}

/** A body sent chunked (no Content-Length): the host can only count it as it arrives. */
const chunked = (data: Buffer) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      for (let i = 0; i < data.length; i += 1000) controller.enqueue(data.subarray(i, i + 1000));
      controller.close();
    },
  });

const tempFilesUnder = (dir: string): string[] =>
  fs.existsSync(dir)
    ? fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => isTemporaryFileName(path.basename(f)))
    : [];
const page = (host: Started) => fs.readFileSync(path.join(host.contracts, 'HDS', 'page.html'), 'utf8');

describe('PUT /wwwroot/api/sync/upload: one file as the whole body', () => {
  it('creates a file (and its folders), replaces it, and answers what it stored', async () => {
    const host = await start();
    const bytes = Buffer.from(Array.from({ length: 256 * 3 }, (_, i) => i % 256));
    let res = await put(host, { changeType: 'Created', filePath: 'HDS/new/all-bytes.bin' }, bytes);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      module: 'wwwroot',
      path: 'HDS/new/all-bytes.bin',
      change: 'Created',
      bytes: bytes.length,
      sha256: sha(bytes),
      existed: false,
      refresh: { ok: true, via: 'cache' },
    });
    expect(fs.readFileSync(path.join(host.contracts, 'HDS', 'new', 'all-bytes.bin')).equals(bytes)).toBe(true);

    // Replaced, chunked this time, and served at once; forbes's leading `/` and `\` are taken.
    res = await put(host, { filePath: '/HDS\\page.html' }, chunked(Buffer.from('<p>v2</p>')));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ path: 'HDS/page.html', existed: true, sha256: sha('<p>v2</p>') });
    expect(await (await fetch(`${host.url}/view/page.html`)).text()).toBe('<p>v2</p>');

    // An empty body is an empty file.
    res = await put(host, { filePath: 'HDS/empty.txt' }, '');
    expect(await res.json()).toMatchObject({ bytes: 0, sha256: sha('') });
    expect(tempFilesUnder(host.contracts)).toEqual([]);
  });

  it('answers 401 for a missing, malformed or wrong token, and takes the right one', async () => {
    const host = await start();
    const cases: Array<[Record<string, string>, string]> = [
      [{}, 'sync.missing_token'],
      [{ Authorization: 'Bearer x' }, 'sync.malformed_token'],
      [{ Authorization: basic(`${TOKEN}x`) }, 'sync.invalid_token'],
      [{ Authorization: basic(TOKEN.slice(0, -1)) }, 'sync.invalid_token'],
    ];
    for (const [headers, code] of cases) {
      const res = await put(host, { filePath: 'HDS/page.html' }, 'stolen', headers);
      expect(res.status, code).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Basic realm="ack-sync"');
      expect(await res.json()).toMatchObject({ code });
    }
    expect(page(host)).toBe('<p>v1</p>');
    expect((await put(host, { filePath: 'HDS/page.html' }, 'mine')).status).toBe(200);
    expect(page(host)).toBe('mine');
  });

  it('counts wrong tokens against the client: 429 with Retry-After, even with the right one', async () => {
    const host = await start({ maxFailedChecks: 3 });
    for (let i = 0; i < 3; i++)
      expect((await put(host, { filePath: 'HDS/page.html' }, 'x', { Authorization: basic(`guess-${i}`) })).status).toBe(
        401,
      );
    const blocked = await put(host, { filePath: 'HDS/page.html' }, 'x');
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(page(host)).toBe('<p>v1</p>');
  });

  it('refuses every path that leaves the module folder with 400 and writes nothing; its neighbours are taken', async () => {
    const host = await start();
    const outside = path.join(host.home.home, 'outside');
    fs.mkdirSync(outside);
    fs.symlinkSync(outside, path.join(host.contracts, 'HDS', 'link'));
    const refused = [
      '../escape.html',
      'HDS/../../escape.html',
      '..\\escape.html',
      '..',
      'C:/escape.html',
      '\\\\server\\share\\escape.html',
      '//server/share/escape.html',
      'HDS/a\0b.html',
      'HDS/a\nb.html',
      'HDS/link/escape.html',
      'HDS/.page.html.0a1b2c.ack-tmp',
    ];
    for (const filePath of refused) {
      const res = await put(host, { filePath }, 'escaped');
      expect(res.status, filePath).toBe(400);
      expect(await res.json()).toMatchObject({ code: 'sync.invalid_path' });
    }
    expect(fs.readdirSync(outside)).toEqual([]);
    expect(fs.existsSync(path.join(host.home.home, 'escape.html'))).toBe(false);
    expect(tempFilesUnder(host.home.home)).toEqual([]);
    for (const filePath of ['HDS/..escape.html', 'HDS/C_/escape.html', 'HDS/page.ack-tmp']) {
      const res = await put(host, { filePath }, 'inside');
      expect(res.status, filePath).toBe(200);
    }
  });

  it('answers 400 for a missing or bad field and for Deleted, 415 for an encoded body', async () => {
    const host = await start();
    const cases: Array<[Record<string, string>, string]> = [
      [{ moduleName: '', filePath: 'HDS/x.html' }, 'sync.missing_field'],
      [{ moduleName: 'nosuch', filePath: 'HDS/x.html' }, 'sync.invalid_module'],
      [{ changeType: '', filePath: 'HDS/x.html' }, 'sync.missing_field'],
      [{ changeType: 'Renamed', filePath: 'HDS/x.html' }, 'sync.invalid_change_type'],
      [{ changeType: 'Deleted', filePath: 'HDS/page.html' }, 'sync.invalid_change_type'],
      [{}, 'sync.missing_field'],
    ];
    for (const [fields, code] of cases) {
      const res = await put(host, fields, 'x');
      expect(res.status, code).toBe(400);
      expect(await res.json()).toMatchObject({ code });
    }
    const gzip = await put(host, { filePath: 'HDS/page.html' }, 'x', {
      Authorization: AUTH,
      'Content-Encoding': 'gzip',
    });
    expect(gzip.status).toBe(415);
    expect(await gzip.json()).toMatchObject({ code: 'request.encoding_unsupported' });
    // Its neighbour, `identity`, is the body as it is.
    const plain = await put(host, { filePath: 'HDS/page.html' }, 'x', {
      Authorization: AUTH,
      'Content-Encoding': 'identity',
    });
    expect(plain.status).toBe(200);
    expect(page(host)).toBe('x');
    expect(fs.existsSync(path.join(host.contracts, 'HDS', 'x.html'))).toBe(false);
  });

  it('takes a file at MaxContractSyncFileBytes and refuses one byte more with 413, declared or chunked', async () => {
    const host = await start({ maxFileBytes: 1024 });
    expect((await put(host, { filePath: 'HDS/page.html' }, Buffer.alloc(1024, 0x61))).status).toBe(200);
    for (const body of [Buffer.alloc(1025, 0x62), chunked(Buffer.alloc(1025, 0x62))]) {
      const res = await put(host, { filePath: 'HDS/page.html' }, body);
      expect(res.status).toBe(413);
      expect(await res.json()).toMatchObject({ code: 'sync.file_too_large' });
    }
    expect(page(host)).toBe('a'.repeat(1024));
    const fresh = await put(
      host,
      { changeType: 'Created', filePath: 'HDS/fresh/big.bin' },
      chunked(Buffer.alloc(5000)),
    );
    expect(fresh.status).toBe(413);
    expect(fs.existsSync(path.join(host.contracts, 'HDS', 'fresh'))).toBe(false);
    expect(tempFilesUnder(host.contracts)).toEqual([]);
  });

  it('counts the body against MaxRequestBodySize when that is the smaller limit: 413 request.body_too_large', async () => {
    const host = await start({ maxFileBytes: 100_000, maxBodyBytes: 2048 });
    expect((await put(host, { filePath: 'HDS/page.html' }, chunked(Buffer.alloc(2048, 0x63)))).status).toBe(200);
    for (const body of [Buffer.alloc(2049), chunked(Buffer.alloc(2049))]) {
      const res = await put(host, { filePath: 'HDS/page.html' }, body);
      expect(res.status).toBe(413);
      expect(await res.json()).toMatchObject({ code: 'request.body_too_large' });
    }
    expect(page(host)).toBe('c'.repeat(2048));
    expect(tempFilesUnder(host.contracts)).toEqual([]);
  });

  // Small bodies are written on the main thread, big ones (8 MiB or more declared) on the upload write thread.
  const cuts = [
    { body: 'small', declared: 1_000_000, sent: 300_000 },
    { body: 'big', declared: 20 * 1024 * 1024, sent: 10 * 1024 * 1024 },
  ];

  it.each(cuts)(
    'forgets a client that leaves mid-body ($body): no temporary file, the old file kept, the host runs on',
    async ({ declared, sent }) => {
      const host = await start({ maxFileBytes: 32 * 1024 * 1024 });
      const conn = await rawConnection(host.url);
      conn.write(
        `PUT ${target({ filePath: 'HDS/page.html' })} HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\nContent-Length: ${declared}\r\n\r\n`,
      );
      conn.write(Buffer.alloc(sent, 0x7a));
      const dir = path.join(host.contracts, 'HDS');
      await waitFor(() => tempFilesUnder(dir).length === 1);
      conn.destroy();
      await waitFor(() => tempFilesUnder(dir).length === 0);
      expect(fs.readdirSync(dir)).toEqual(['page.html']);
      expect(page(host)).toBe('<p>v1</p>');
      const next = Buffer.alloc(declared, 0x61);
      expect(await (await put(host, { filePath: 'HDS/page.html' }, next)).json()).toMatchObject({
        bytes: declared,
        sha256: sha(next),
      });
    },
  );

  it('over HTTP/2, stores a whole stream and nothing of one the client cancels mid-body', async () => {
    const host = await start({ tls: true });
    const session = http2.connect(host.host.tlsUrl!, { rejectUnauthorized: false });
    session.on('error', () => undefined);
    const send = (filePath: string, body: Buffer, cancel: boolean) =>
      new Promise<number | 'cancelled'>((resolve) => {
        const stream = session.request({ ':method': 'PUT', ':path': target({ filePath }), authorization: AUTH });
        let status = 0;
        stream.on('response', (h) => (status = Number(h[':status'])));
        stream.on('error', () => undefined);
        stream.on('close', () => resolve(cancel ? 'cancelled' : status));
        stream.resume();
        if (!cancel) return void stream.end(body);
        // Part of the body, then RST_STREAM (CANCEL) instead of its end.
        stream.write(body, () => setTimeout(() => stream.close(http2.constants.NGHTTP2_CANCEL), 100));
      });
    try {
      expect(await send('HDS/cut.html', Buffer.alloc(1000, 0x63), true)).toBe('cancelled');
      expect(await send('HDS/whole.html', Buffer.alloc(1000, 0x77), false)).toBe(200);
      const dir = path.join(host.contracts, 'HDS');
      await waitFor(() => tempFilesUnder(dir).length === 0);
      expect(fs.readdirSync(dir).sort()).toEqual(['page.html', 'whole.html']);
      expect(fs.readFileSync(path.join(dir, 'whole.html'))).toEqual(Buffer.alloc(1000, 0x77));
    } finally {
      session.close();
    }
  });

  it.each(cuts)(
    'answers an upload stalled mid-body ($body) 503 when the host stops, and removes its staged file',
    async ({ declared, sent }) => {
      const host = await start({ maxFileBytes: 32 * 1024 * 1024 });
      const conn = await rawConnection(host.url);
      conn.write(
        `PUT ${target({ filePath: 'HDS/page.html' })} HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\nContent-Length: ${declared}\r\n\r\n`,
      );
      conn.write(Buffer.alloc(sent, 0x79)); // the rest never comes
      const dir = path.join(host.contracts, 'HDS');
      await waitFor(() => tempFilesUnder(dir).length === 1);
      await host.close();
      const text = await conn.until(/\r\n\r\n[\s\S]*\}/);
      expect(text).toMatch(/^HTTP\/1\.1 503 /);
      expect(text).toContain('host.stopping');
      expect(tempFilesUnder(dir)).toEqual([]);
      expect(page(host)).toBe('<p>v1</p>');
      conn.destroy();
    },
  );
});

// A body declared at 8 MiB or more is hashed and written on the upload write thread (docs/sync.md
// "Speed"): the same answers over both protocols (the cuts above take that path too).
describe('PUT /wwwroot/api/sync/upload: a big body, written off the main thread', () => {
  const MiB = 1024 * 1024;
  const big = (size: number, seed: number) => Buffer.from(Array.from({ length: size }, (_, i) => (i * 7 + seed) % 251));

  it('stores it whole with its digest, replaces it, and serves it; over HTTP/2 as well', async () => {
    const host = await start({ maxFileBytes: 32 * MiB, tls: true });
    const first = big(12 * MiB + 5, 1);
    let res = await put(host, { changeType: 'Created', filePath: 'HDS/big/one.bin' }, first);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ bytes: first.length, sha256: sha(first), existed: false });
    const stored = path.join(host.contracts, 'HDS', 'big', 'one.bin');
    expect(fs.readFileSync(stored).equals(first)).toBe(true);

    const second = big(9 * MiB, 2);
    res = await put(host, { filePath: 'HDS/big/one.bin' }, second);
    expect(await res.json()).toMatchObject({ bytes: second.length, sha256: sha(second), existed: true });
    expect(Buffer.from(await (await fetch(`${host.url}/view/big/one.bin`)).arrayBuffer()).equals(second)).toBe(true);

    // HTTP/2 hands over chunks the host does not own: they are copied to the thread, not moved.
    const session = http2.connect(host.host.tlsUrl!, { rejectUnauthorized: false });
    session.on('error', () => undefined);
    try {
      const third = big(10 * MiB, 3);
      const answer = await new Promise<string>((resolve, reject) => {
        const stream = session.request({
          ':method': 'PUT',
          ':path': target({ filePath: 'HDS/big/one.bin' }),
          authorization: AUTH,
          'content-length': String(third.length),
        });
        let text = '';
        stream.setEncoding('utf8');
        stream.on('data', (d: string) => (text += d));
        stream.on('end', () => resolve(text));
        stream.on('error', reject);
        stream.end(third);
      });
      expect(JSON.parse(answer)).toMatchObject({ bytes: third.length, sha256: sha(third) });
      expect(fs.readFileSync(stored).equals(third)).toBe(true);
    } finally {
      session.close();
    }
    expect(tempFilesUnder(host.contracts)).toEqual([]);
  });

  it('over HTTP/2, keeps nothing of a big body the client cancels mid-body, and takes the next one', async () => {
    const host = await start({ maxFileBytes: 32 * MiB, tls: true });
    const session = http2.connect(host.host.tlsUrl!, { rejectUnauthorized: false });
    session.on('error', () => undefined);
    const dir = path.join(host.contracts, 'HDS');
    try {
      // 12 MiB declared, 9 MiB sent, then RST_STREAM (CANCEL) instead of the rest.
      await new Promise<void>((resolve) => {
        const stream = session.request({
          ':method': 'PUT',
          ':path': target({ filePath: 'HDS/page.html' }),
          authorization: AUTH,
          'content-length': String(12 * MiB),
        });
        stream.on('error', () => undefined);
        stream.on('close', () => resolve());
        stream.resume();
        stream.write(big(9 * MiB, 5), () =>
          waitFor(() => tempFilesUnder(dir).length === 1).then(() => stream.close(http2.constants.NGHTTP2_CANCEL)),
        );
      });
      await waitFor(() => tempFilesUnder(dir).length === 0);
      expect(page(host)).toBe('<p>v1</p>');
      const next = big(8 * MiB, 6);
      expect(await (await put(host, { filePath: 'HDS/page.html' }, next)).json()).toMatchObject({
        bytes: next.length,
        sha256: sha(next),
      });
    } finally {
      session.close();
    }
  });
});

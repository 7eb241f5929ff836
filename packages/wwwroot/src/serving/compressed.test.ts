import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest, startWwwroot, type WwwrootFixture } from '../test-support/test-fixture.js';
import { chooseEncoding } from './encoding.js';
import { createCompressionCache } from './compression-cache.js';
import { createFileStore } from './file-store.js';

// Precompressed sidecars, compression once per file version, and immutable caching, over a real
// socket with raw requests (fetch would add Accept-Encoding and decode the body).

const ROOT = 'modules/wwwroot/wwwroot';
const script = 'console.log("hello from app.js");\n'.repeat(200);
const br = zlib.brotliCompressSync(script);
const gz = zlib.gzipSync(script);

let t: WwwrootFixture;
let root: string;
const get = (p: string, headers: Record<string, string> = {}) => rawRequest(t.url, p, { headers });

beforeAll(async () => {
  t = await startWwwroot({
    files: {
      [`${ROOT}/app.js`]: script,
      [`${ROOT}/app.js.br`]: br,
      [`${ROOT}/app.js.gz`]: gz,
      [`${ROOT}/only-gz.css`]: 'body{color:red}\n'.repeat(100),
      [`${ROOT}/only-gz.css.gz`]: zlib.gzipSync('body{color:red}\n'.repeat(100)),
      [`${ROOT}/orphan.js.br`]: br,
      [`${ROOT}/app.3f9a1c2b.js`]: 'fingerprinted',
      [`${ROOT}/ack.loader.3f9a1c2b.js`]: 'loader',
      [`${ROOT}/plain.js`]: 'not fingerprinted',
    },
  });
  root = path.join(t.home.home, ROOT);
});
afterAll(() => t?.close());

describe('precompressed sidecars', () => {
  it('serves the sidecar the client accepts, brotli first, with Vary and the original type', async () => {
    const b = await get('/app.js', { 'Accept-Encoding': 'gzip, br' });
    expect(b.headers['content-encoding']).toBe('br');
    expect(b.headers['content-type']).toMatch(/javascript/);
    // One Vary list with the edge's Origin (CORS) and the file's Accept-Encoding.
    expect(b.headers.vary).toBe('Origin, Accept-Encoding');
    expect(zlib.brotliDecompressSync(b.body).toString()).toBe(script);
    const g = await get('/app.js', { 'Accept-Encoding': 'gzip' });
    expect(g.headers['content-encoding']).toBe('gzip');
    expect(zlib.gunzipSync(g.body).toString()).toBe(script);
    const none = await get('/app.js');
    expect(none.headers['content-encoding']).toBeUndefined();
    expect(none.headers.vary).toBe('Origin, Accept-Encoding');
    expect(none.text).toBe(script);
  });

  it('answers a range of the chosen representation with the same Vary and validators', async () => {
    const whole = await get('/app.js', { 'Accept-Encoding': 'br' });
    const part = await get('/app.js', { 'Accept-Encoding': 'br', Range: 'bytes=0-9' });
    expect(part.status).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes 0-9/${br.length}`);
    expect(part.headers['content-length']).toBe('10');
    expect(part.headers.etag).toBe(whole.headers.etag);
    expect(part.headers.vary).toBe('Origin, Accept-Encoding');
    expect(part.body.equals(br.subarray(0, 10))).toBe(true);
  });

  it('respects q=0 and q-values', async () => {
    expect((await get('/app.js', { 'Accept-Encoding': 'br;q=0, gzip' })).headers['content-encoding']).toBe('gzip');
    expect((await get('/app.js', { 'Accept-Encoding': 'br;q=0.5, gzip;q=0.9' })).headers['content-encoding']).toBe(
      'gzip',
    );
    expect(
      (await get('/app.js', { 'Accept-Encoding': 'br;q=0, gzip;q=0' })).headers['content-encoding'],
    ).toBeUndefined();
    expect((await get('/app.js', { 'Accept-Encoding': '*;q=0' })).headers['content-encoding']).toBeUndefined();
    expect((await get('/app.js', { 'Accept-Encoding': '*' })).headers['content-encoding']).toBe('br');
    // Only the encodings there are sidecars for.
    expect((await get('/only-gz.css', { 'Accept-Encoding': 'br, gzip' })).headers['content-encoding']).toBe('gzip');
  });

  it('never serves a sidecar without its original', async () => {
    expect((await get('/orphan.js', { 'Accept-Encoding': 'br' })).status).toBe(404);
  });

  it('gives each encoding its own validator, and answers 304 per encoding', async () => {
    const b = await get('/app.js', { 'Accept-Encoding': 'br' });
    const g = await get('/app.js', { 'Accept-Encoding': 'gzip' });
    const i = await get('/app.js');
    const tags = [b.headers.etag, g.headers.etag, i.headers.etag];
    expect(new Set(tags).size).toBe(3);
    const nm = await get('/app.js', { 'Accept-Encoding': 'br', 'If-None-Match': b.headers.etag! });
    expect(nm.status).toBe(304);
    expect(nm.headers.etag).toBe(b.headers.etag);
    expect(nm.headers.vary).toBe('Origin, Accept-Encoding');
    // The brotli validator does not validate the gzip representation.
    expect((await get('/app.js', { 'Accept-Encoding': 'gzip', 'If-None-Match': b.headers.etag! })).status).toBe(200);
    expect((await get('/app.js', { 'Accept-Encoding': 'gzip', 'If-None-Match': g.headers.etag! })).status).toBe(304);
  });

  it('never serves a sidecar older than a changed original; a new sidecar is served at once', async () => {
    const file = path.join(root, 'app.js');
    const changed = 'console.log("changed");\n'.repeat(100);
    fs.writeFileSync(file, changed);
    // Sidecars now older than the original: the original is sent.
    const future = new Date(Date.now() + 5_000);
    fs.utimesSync(file, future, future);
    const stale = await get('/app.js', { 'Accept-Encoding': 'br, gzip' });
    expect(stale.headers['content-encoding']).toBeUndefined();
    expect(stale.text).toBe(changed);
    // A build step writes new sidecars: served on the next request.
    fs.writeFileSync(`${file}.br`, zlib.brotliCompressSync(changed));
    const later = new Date(Date.now() + 10_000);
    fs.utimesSync(`${file}.br`, later, later);
    const fresh = await get('/app.js', { 'Accept-Encoding': 'br, gzip' });
    expect(fresh.headers['content-encoding']).toBe('br');
    expect(zlib.brotliDecompressSync(fresh.body).toString()).toBe(changed);
  });
});

describe('immutable caching', () => {
  it('only for fingerprinted names, never for loader files', async () => {
    expect((await get('/app.3f9a1c2b.js')).headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect((await get('/plain.js')).headers['cache-control']).toBe('no-cache');
    expect((await get('/ack.loader.3f9a1c2b.js')).headers['cache-control']).toBe('no-cache, no-store');
  });
});

describe('UseResponseComression', () => {
  let c: WwwrootFixture;
  const text = 'a text file worth compressing, '.repeat(300);
  const SHARED = Array.from({ length: 12 }, (_, i) => `theme-${i}.css`);
  // The example screen's stylesheet: brotli saves 14 bytes of its body, less than the header it adds.
  const tiny =
    '.sys010-status {\n  padding: 0.5rem 0.75rem;\n  border-left: 4px solid var(--ack-accent, #0b6e4f);\n}\n';
  beforeAll(async () => {
    c = await startWwwroot({
      appSettings: { UseResponseComression: true },
      moduleConfig: { SharedFileConfigPath: '../config/shared_files.json' },
      files: {
        [`${ROOT}/page.html`]: `<p>${text}</p>`,
        [`${ROOT}/image.png`]: Buffer.alloc(4096, 1),
        [`${ROOT}/tiny.css`]: tiny,
        ...Object.fromEntries(SHARED.map((name) => [`shared/${name}`, `/* ${name} */`])),
        'config/shared_files.json': {
          items: SHARED.map((name) => ({ requestPath: `/shared/${name}`, hostFilePath: `../shared/${name}` })),
        },
      },
    });
  });
  afterAll(() => c?.close());

  it('compresses a text file (brotli, gzip) with its own validators; not images', async () => {
    const b = await rawRequest(c.url, '/page.html', { headers: { 'Accept-Encoding': 'br' } });
    expect(b.headers['content-encoding']).toBe('br');
    expect(zlib.brotliDecompressSync(b.body).toString()).toBe(`<p>${text}</p>`);
    const g = await rawRequest(c.url, '/page.html', { headers: { 'Accept-Encoding': 'gzip' } });
    expect(g.headers['content-encoding']).toBe('gzip');
    expect(g.headers.etag).not.toBe(b.headers.etag);
    expect(
      (
        await rawRequest(c.url, '/page.html', {
          headers: { 'Accept-Encoding': 'gzip', 'If-None-Match': g.headers.etag! },
        })
      ).status,
    ).toBe(304);
    const png = await rawRequest(c.url, '/image.png', { headers: { 'Accept-Encoding': 'br, gzip' } });
    expect(png.headers['content-encoding']).toBeUndefined();
    expect(png.body.length).toBe(4096);
  });

  it('sends a tiny file as it is when compressing it would make the answer larger', async () => {
    const saved =
      tiny.length - zlib.brotliCompressSync(tiny, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 6 } }).length;
    expect(saved).toBeGreaterThan(0);
    expect(saved).toBeLessThan('Content-Encoding: br\r\n'.length);
    const r = await rawRequest(c.url, '/tiny.css', { headers: { 'Accept-Encoding': 'br, gzip' } });
    expect(r.headers['content-encoding']).toBeUndefined();
    expect(r.text).toBe(tiny);
  });

  it('compresses the shared-file manifest and the browser loader once, each encoding with its own validator', async () => {
    for (const target of ['/shared-files/manifest', '/wwwroot/api/loader/ack.loader.js']) {
      const plain = await rawRequest(c.url, target);
      expect(plain.headers['content-encoding']).toBeUndefined();
      expect(plain.headers.vary).toBe('Origin, Accept-Encoding');
      const b = await rawRequest(c.url, target, { headers: { 'Accept-Encoding': 'gzip, br' } });
      expect(b.headers['content-encoding']).toBe('br');
      expect(b.headers.vary).toBe('Origin, Accept-Encoding');
      expect(zlib.brotliDecompressSync(b.body).equals(plain.body)).toBe(true);
      expect(Number(b.headers['content-length'])).toBeLessThan(plain.body.length);
      const g = await rawRequest(c.url, target, { headers: { 'Accept-Encoding': 'br;q=0, gzip' } });
      expect(g.headers['content-encoding']).toBe('gzip');
      expect(zlib.gunzipSync(g.body).equals(plain.body)).toBe(true);
      expect(new Set([plain.headers.etag, b.headers.etag, g.headers.etag]).size).toBe(3);
      const again = (etag: string, encoding: string) =>
        rawRequest(c.url, target, { headers: { 'Accept-Encoding': encoding, 'If-None-Match': etag } });
      expect((await again(b.headers.etag!, 'br')).status).toBe(304);
      // A brotli validator does not match the gzip answer: the client gets the gzip bytes.
      expect((await again(b.headers.etag!, 'gzip')).status).toBe(200);
    }
    const manifest = JSON.parse((await rawRequest(c.url, '/shared-files/manifest')).text) as unknown[];
    expect(manifest).toHaveLength(SHARED.length);
  });

  it('serves a changed file compressed anew on the next request', async () => {
    const file = path.join(c.home.home, ROOT, 'page.html');
    fs.writeFileSync(file, `<p>changed ${text}</p>`);
    const b = await rawRequest(c.url, '/page.html', { headers: { 'Accept-Encoding': 'br' } });
    expect(zlib.brotliDecompressSync(b.body).toString()).toBe(`<p>changed ${text}</p>`);
  });

  it('keeps the compressed copies within their byte bound', () => {
    const dir = fs.mkdtempSync(path.join(c.home.home, 'bound-'));
    const cache = createCompressionCache({ maxBytes: 10_000 });
    const store = createFileStore({ maxAgeSeconds: 0, compression: cache });
    for (let i = 0; i < 20; i++) {
      const file = path.join(dir, `f${i}.txt`);
      fs.writeFileSync(file, crypto.randomBytes(600).toString('hex'));
      const facts = store.lookup(file, dir)!;
      expect(facts.negotiate!('br').body).toBeDefined();
      expect(cache.stats().bytes).toBeLessThanOrEqual(10_000);
    }
    expect(cache.stats().entries).toBeGreaterThan(0);
    expect(cache.stats().entries).toBeLessThan(20);
  });
});

describe('chooseEncoding', () => {
  it('follows q-values, *, and prefers brotli on a tie', () => {
    expect(chooseEncoding('gzip, deflate, br', ['br', 'gzip'])).toBe('br');
    expect(chooseEncoding('gzip;q=1, br;q=0.8', ['br', 'gzip'])).toBe('gzip');
    expect(chooseEncoding('identity', ['br', 'gzip'])).toBeUndefined();
    expect(chooseEncoding('br;q=0', ['br'])).toBeUndefined();
    expect(chooseEncoding('*;q=0.1, br;q=0', ['br', 'gzip'])).toBe('gzip');
    expect(chooseEncoding('', ['br'])).toBeUndefined();
  });
});

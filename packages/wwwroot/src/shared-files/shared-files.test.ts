import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AckModuleFactory } from '@ack/host';
import { rawRequest, startWwwroot, type WwwrootFixture } from '../test-support/test-fixture.js';

// The shared-file catalog, its manifest and their endpoints (docs/static-files.md "Shared files"), over a real socket.

const CATALOG = 'config/shared_files.json';
const withCatalog = { SharedFileConfigPath: `../${CATALOG}` };

describe('shared files', () => {
  let t: WwwrootFixture;
  beforeAll(async () => {
    t = await startWwwroot({
      moduleConfig: withCatalog,
      env: { SHARED_DIR: '../shared' },
      files: {
        'shared/theme.css': 'body{color:green}',
        'shared/app-init.js': 'window.x=1;',
        'shared/settings.json': '{"a":1}',
        'shared/notice.html': '<p>notice</p>',
        'shared/readme.md': '# read me',
        'shared/terms.txt': 'terms',
        'shared/build.stamp': 'stamp',
        'shared/big.txt': 'x'.repeat(100_000),
        'shared/first.txt': 'first wins',
        'shared/second.txt': 'second loses',
        'shared/from-env.txt': 'expanded',
        'config/shared/theme.css': 'WRONG: resolved from the catalog folder',
        'modules/wwwroot/wwwroot/shared/not-there-yet.txt': 'the static root answered',
        'modules/wwwroot/wwwroot/css/site.css': 'h1{}',
        [CATALOG]: {
          items: [
            { requestPath: '/shared/theme.css', hostFilePath: '../shared/theme.css' },
            { requestPath: '/shared/app-init.js', hostFilePath: '../shared/app-init.js' },
            { requestPath: '/shared/settings.json', hostFilePath: '../shared/settings.json' },
            { requestPath: '/shared/notice.html', hostFilePath: '../shared/notice.html' },
            { requestPath: '/shared/readme.md', hostFilePath: '../shared/readme.md' },
            { requestPath: '/shared/terms.txt', hostFilePath: '../shared/terms.txt' },
            { requestPath: '/shared/build.stamp', hostFilePath: '../shared/build.stamp' },
            { requestPath: '/shared/big.txt', hostFilePath: '../shared/big.txt' },
            { requestPath: '/site.css', hostFilePath: '../modules/wwwroot/wwwroot/css/site.css' },
            { requestPath: '', hostFilePath: '../shared/terms.txt' },
            { requestPath: '/empty-host-path.txt', hostFilePath: '' },
            { requestPath: '/dup.txt', hostFilePath: '../shared/first.txt' },
            { requestPath: '/DUP.txt', hostFilePath: '../shared/second.txt' },
            { requestPath: '/env.txt', hostFilePath: '%SHARED_DIR%/from-env.txt' },
            { requestPath: '/shared/not-there-yet.txt', hostFilePath: '../shared/not-there-yet.txt' },
            { requestPath: '/shared/changing.txt', hostFilePath: '../shared/changing.txt' },
            { requestPath: 'no-slash.txt', hostFilePath: '../shared/terms.txt' },
            { requestPath: 42, hostFilePath: '../shared/terms.txt' },
            'not an object',
            { requestPath: '/shared/two//slashes.txt', hostFilePath: '../shared/terms.txt' },
          ],
        },
      },
    });
  });
  afterAll(() => t?.close());

  it('serves each catalog file with the MIME type of its extension, charset on text', async () => {
    const expected: Record<string, [string, string]> = {
      '/shared/theme.css': ['text/css; charset=utf-8', 'body{color:green}'],
      '/shared/app-init.js': ['text/javascript; charset=utf-8', 'window.x=1;'],
      '/shared/settings.json': ['application/json; charset=utf-8', '{"a":1}'],
      '/shared/notice.html': ['text/html; charset=utf-8', '<p>notice</p>'],
      '/shared/readme.md': ['text/markdown; charset=utf-8', '# read me'],
      '/shared/terms.txt': ['text/plain; charset=utf-8', 'terms'],
      '/shared/build.stamp': ['application/octet-stream', 'stamp'],
    };
    for (const [p, [type, body]] of Object.entries(expected)) {
      const res = await fetch(`${t.url}${p}`);
      expect(res.status, p).toBe(200);
      expect(res.headers.get('content-type'), p).toBe(type);
      expect(await res.text(), p).toBe(body);
    }
  });

  it('resolves a relative hostFilePath from the entry base path, not from the catalog folder', async () => {
    expect(await (await fetch(`${t.url}/shared/theme.css`)).text()).not.toContain('WRONG');
  });

  it('expands environment variables in hostFilePath', async () => {
    expect(await (await fetch(`${t.url}/env.txt`)).text()).toBe('expanded');
  });

  it('maps a file inside the static root under its own URL too', async () => {
    expect(await (await fetch(`${t.url}/site.css`)).text()).toBe('h1{}');
    expect(await (await fetch(`${t.url}/css/site.css`)).text()).toBe('h1{}');
  });

  it('matches the whole path case-insensitively, without the query string, and nothing else', async () => {
    expect((await fetch(`${t.url}/SHARED/Theme.CSS`)).status).toBe(200);
    expect((await fetch(`${t.url}/shared/theme.css?v=123&x`)).status).toBe(200);
    expect((await fetch(`${t.url}/shared/theme.cs`)).status).toBe(404);
    expect((await fetch(`${t.url}/shared/theme.css/x`)).status).toBe(404);
    expect((await fetch(`${t.url}/shared/theme.css/`)).status).toBe(404);
    expect((await fetch(`${t.url}/xshared/theme.css`)).status).toBe(404);
    // An encoded "/" never stands for a separator of a catalog path (the static root then refuses it).
    const encodedSlash = await rawRequest(t.url, '/shared%2Ftheme.css');
    expect(encodedSlash.status).toBe(400);
    expect(encodedSlash.text).not.toContain('color:green');
    // Percent-encoded letters are the same path.
    expect((await rawRequest(t.url, '/shared/th%65me.css')).status).toBe(200);
  });

  it('matches empty segments exactly, as the original does', async () => {
    const twoSlashes = await rawRequest(t.url, '/shared/two//slashes.txt');
    expect(twoSlashes.status).toBe(200);
    expect(twoSlashes.text).toContain('terms');
    expect((await rawRequest(t.url, '/SHARED/Two//Slashes.TXT')).status).toBe(200);
    // The neighbours without (or with another) empty segment are other paths.
    expect((await rawRequest(t.url, '/shared/two/slashes.txt')).status).toBe(404);
    expect((await rawRequest(t.url, '/shared/two///slashes.txt')).status).toBe(404);
    const doubled = await rawRequest(t.url, '/shared//theme.css');
    expect(doubled.status).toBe(404);
    expect(doubled.text).not.toContain('color:green');
  });

  it('skips items with an empty field, and the first of duplicates wins', async () => {
    expect((await fetch(`${t.url}/empty-host-path.txt`)).status).toBe(404);
    expect(await (await fetch(`${t.url}/dup.txt`)).text()).toBe('first wins');
    expect(await (await fetch(`${t.url}/Dup.TXT`)).text()).toBe('first wins');
    expect(t.logs.some((l) => l.startsWith('warn:') && l.includes('items[9]') && l.includes('empty'))).toBe(true);
    expect(t.logs.some((l) => l.startsWith('warn:') && l.includes('items[10]') && l.includes('empty'))).toBe(true);
    expect(t.logs.some((l) => l.startsWith('warn:') && l.includes('items[12]') && l.includes('first one wins'))).toBe(
      true,
    );
    expect(t.logs.some((l) => l.includes('items[16]') && l.includes('must start with /'))).toBe(true);
    expect(t.logs.some((l) => l.includes('items[17].requestPath must be a string'))).toBe(true);
  });

  it('passes a missing target on: to a same-named static file, else the 404', async () => {
    const res = await fetch(`${t.url}/shared/not-there-yet.txt`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('the static root answered');
    fs.rmSync(path.join(t.home.home, 'modules/wwwroot/wwwroot/shared/not-there-yet.txt'));
    expect((await fetch(`${t.url}/shared/not-there-yet.txt`)).status).toBe(404);
    // The target appears: served from then on, without a restart.
    t.home.write('shared/not-there-yet.txt', 'now it is there');
    expect(await (await fetch(`${t.url}/shared/not-there-yet.txt`)).text()).toBe('now it is there');
  });

  it('serves a changed target new on the next request', async () => {
    t.home.write('shared/changing.txt', 'content-A');
    expect(await (await fetch(`${t.url}/shared/changing.txt`)).text()).toBe('content-A');
    expect(await (await fetch(`${t.url}/shared/changing.txt`)).text()).toBe('content-A');
    t.home.write('shared/changing.txt', 'content-B');
    expect(await (await fetch(`${t.url}/shared/changing.txt`)).text()).toBe('content-B');
    t.home.write('shared/changing.txt', 'content-C is longer');
    expect(await (await fetch(`${t.url}/shared/changing.txt`)).text()).toBe('content-C is longer');
  });

  it('answers HEAD, 304 (ETag and date), Range 206 and 416', async () => {
    const head = await rawRequest(t.url, '/shared/terms.txt', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers['content-length']).toBe('5');
    expect(head.body.length).toBe(0);
    const first = await fetch(`${t.url}/shared/terms.txt`);
    const etag = first.headers.get('etag')!;
    expect(etag).toBeTruthy();
    expect(first.headers.get('last-modified')).toBeTruthy();
    expect((await fetch(`${t.url}/shared/terms.txt`, { headers: { 'If-None-Match': etag } })).status).toBe(304);
    expect(
      (
        await fetch(`${t.url}/shared/terms.txt`, {
          headers: { 'If-Modified-Since': first.headers.get('last-modified')! },
        })
      ).status,
    ).toBe(304);
    const part = await fetch(`${t.url}/shared/big.txt`, { headers: { Range: 'bytes=99990-' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe('bytes 99990-99999/100000');
    expect(await part.text()).toBe('x'.repeat(10));
    expect((await fetch(`${t.url}/shared/terms.txt`, { headers: { Range: 'bytes=10-' } })).status).toBe(416);
  });

  it('only answers GET and HEAD', async () => {
    expect((await fetch(`${t.url}/shared/terms.txt`, { method: 'POST' })).status).toBe(404);
    expect((await fetch(`${t.url}/shared-files/manifest`, { method: 'DELETE' })).status).toBe(404);
  });
});

describe('the manifest', () => {
  let t: WwwrootFixture;
  beforeAll(async () => {
    t = await startWwwroot({
      moduleConfig: withCatalog,
      files: {
        'shared/b.js': 'b',
        [CATALOG]: {
          items: [
            { requestPath: '/z/last-but-first.css', hostFilePath: '../shared/missing.css' },
            { requestPath: '/b.js', hostFilePath: '../shared/b.js' },
            { requestPath: '/B.JS', hostFilePath: '../shared/other.js' },
            { requestPath: '/a.md', hostFilePath: '' },
            { requestPath: '/Shared-Files/Manifest', hostFilePath: '../shared/b.js' },
          ],
        },
      },
    });
  });
  afterAll(() => t?.close());

  it('lists the request paths in catalog order, never a host path, with no-cache', async () => {
    const res = await fetch(`${t.url}/shared-files/manifest`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    const text = await res.text();
    expect(JSON.parse(text)).toEqual([{ requestPath: '/z/last-but-first.css' }, { requestPath: '/b.js' }]);
    expect(text).not.toContain('shared/');
    expect(text).not.toContain('hostFilePath');
  });

  it('answers HEAD and revalidation (304), by any case of its path', async () => {
    const res = await fetch(`${t.url}/SHARED-FILES/manifest?t=1`);
    expect(res.status).toBe(200);
    const etag = res.headers.get('etag')!;
    expect((await fetch(`${t.url}/shared-files/manifest`, { headers: { 'If-None-Match': etag } })).status).toBe(304);
    const head = await rawRequest(t.url, '/shared-files/manifest', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
  });
});

describe('a catalog that is missing or not valid: feature off, host up', () => {
  const cases: Array<[string, string | object | undefined, RegExp]> = [
    ['missing', undefined, /does not exist/],
    ['not JSON', '{ "items": [', /not valid JSON/],
    ['no items array', { items: { requestPath: '/a' } }, /"items" must be an array/],
    ['an array at the top', [{ requestPath: '/a', hostFilePath: 'x' }], /top level must be an object/],
  ];
  for (const [name, content, warning] of cases) {
    it(name, async () => {
      const files: Record<string, string | object> = { 'modules/wwwroot/wwwroot/ok.txt': 'static still served' };
      if (content !== undefined) files[CATALOG] = content;
      const t = await startWwwroot({ moduleConfig: withCatalog, files });
      try {
        expect(t.logs.some((l) => l.startsWith('warn:') && l.includes('shared files: off') && warning.test(l))).toBe(
          true,
        );
        // The manifest still answers 200 with an empty list (the loader asks for it on every start).
        const manifest = await fetch(`${t.url}/shared-files/manifest`);
        expect(manifest.status).toBe(200);
        expect(await manifest.json()).toEqual([]);
        expect(await (await fetch(`${t.url}/ok.txt`)).text()).toBe('static still served');
      } finally {
        await t.close();
      }
    });
  }

  it('an empty SharedFileConfigPath turns the feature off without a warning', async () => {
    const t = await startWwwroot({ moduleConfig: { SharedFileConfigPath: '' } });
    try {
      expect(t.logs.some((l) => l.startsWith('warn:'))).toBe(false);
      const manifest = await fetch(`${t.url}/shared-files/manifest`);
      expect(manifest.status).toBe(200);
      expect(manifest.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await manifest.json()).toEqual([]);
    } finally {
      await t.close();
    }
  });
});

describe('shared files come before session and sign-in', () => {
  // A module whose routes cover every path and write to the session: any request that reaches the
  // session phase leaves with a session cookie.
  const sessionToucher: AckModuleFactory = (ctx) => {
    const router = ctx.host.createRouter();
    router.use((req, _res, next) => {
      (req as unknown as { session?: Record<string, unknown> }).session!.touched = true;
      next();
    });
    return { routes: [{ mount: '/', handler: router }] };
  };

  it('a shared-file response carries no session cookie', async () => {
    const t = await startWwwroot({
      appSettings: {
        LoadModules: ['wwwroot', 'touch'],
        SessionState: { IsSession: true, SessionCookieName: 'tst.Session' },
      },
      moduleConfig: withCatalog,
      modules: { touch: sessionToucher },
      files: {
        'shared/a.css': 'a{}',
        [CATALOG]: { items: [{ requestPath: '/a.css', hostFilePath: '../shared/a.css' }] },
      },
    });
    try {
      const other = await fetch(`${t.url}/anything-else`);
      expect(other.headers.getSetCookie().some((c) => c.startsWith('tst.Session='))).toBe(true);
      for (const p of ['/a.css', '/shared-files/manifest']) {
        const res = await fetch(`${t.url}${p}`);
        expect(res.status, p).toBe(200);
        expect(res.headers.getSetCookie(), p).toEqual([]);
      }
    } finally {
      await t.close();
    }
  });
});

describe('catalog paths', () => {
  it('accepts an absolute hostFilePath, in a large catalog (one map lookup per request)', async () => {
    const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-abs-'));
    const absolute = path.join(elsewhere, 'abs.txt');
    fs.writeFileSync(absolute, 'absolute');
    const items = Array.from({ length: 20_000 }, (_, i) => ({
      requestPath: `/bulk/${i}.txt`,
      hostFilePath: '../shared/none.txt',
    }));
    items.push({ requestPath: '/abs.txt', hostFilePath: absolute });
    const t = await startWwwroot({ moduleConfig: withCatalog, files: { [CATALOG]: { items } } });
    try {
      expect(await (await fetch(`${t.url}/ABS.txt`)).text()).toBe('absolute');
      expect((await fetch(`${t.url}/bulk/19999.txt`)).status).toBe(404);
      const manifest = (await (await fetch(`${t.url}/shared-files/manifest`)).json()) as unknown[];
      expect(manifest.length).toBe(20_001);
    } finally {
      await t.close();
      fs.rmSync(elsewhere, { recursive: true, force: true });
    }
  });
});

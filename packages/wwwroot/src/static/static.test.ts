import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest, startWwwroot, type WwwrootFixture } from '../test-support/test-fixture.js';

// The static root (WWWRootBasePath) and contract screens (/{ContractRequestPath}), over a real
// socket: lookup, caching headers, ranges, folders, dotfiles, and every way out of a root.

const ROOT = 'modules/wwwroot/wwwroot';
const kib = (n: number, fill = 'a') => Buffer.alloc(n * 1024, fill);
const SECRET = 'TOP-SECRET-OUTSIDE-THE-ROOT';

let t: WwwrootFixture;
let root: string;

beforeAll(async () => {
  t = await startWwwroot({
    files: {
      [`${ROOT}/index.html`]: '<h1>root index</h1>',
      [`${ROOT}/hello.txt`]: kib(1),
      [`${ROOT}/big.bin`]: Buffer.from(Array.from({ length: 200 * 1024 }, (_, i) => i % 251)),
      [`${ROOT}/empty.txt`]: '',
      [`${ROOT}/Mixed/Case.TXT`]: 'mixed case file',
      [`${ROOT}/dup/README.md`]: 'upper',
      [`${ROOT}/dup/Readme.md`]: 'title',
      [`${ROOT}/dup/readme.md`]: 'lower',
      [`${ROOT}/lib/syn.loader.js`]: 'syn loader',
      [`${ROOT}/lib/ack.loader.mjs`]: 'ack loader',
      [`${ROOT}/app.data`]: 'unknown extension',
      [`${ROOT}/.env`]: SECRET,
      [`${ROOT}/.git/config`]: SECRET,
      [`${ROOT}/sub/.hidden/x.txt`]: SECRET,
      [`${ROOT}/.well-known/security.txt`]: 'Contact: mailto:security@example.com',
      [`${ROOT}/docs/index.html`]: '<h1>docs index</h1>',
      [`${ROOT}/empty-folder/keep.txt`]: 'no index here',
      [`${ROOT}/files/hello world+100%.txt`]: 'spaces plus percent',
      [`${ROOT}/files/naïve.txt`]: 'non-ascii',
      [`${ROOT}/files/bell\u0007.txt`]: 'a name with a control character',
      [`${ROOT}/files/tab\u00a0.txt`]: 'a name with a no-break space',
      [`${ROOT}/view/in-static-root.txt`]: 'must never be served under /view',
      'modules/wwwroot/secret.txt': SECRET,
      'secret.txt': SECRET,
      'outside/secret.txt': SECRET,
      'contracts/wwwroot/HDS/SYS/SYS010.html': '<h1>SYS010</h1>',
      'contracts/wwwroot/HDS/SYS/SYS010.js': 'console.log("SYS010")',
      'contracts/wwwroot/OTHER/x.html': 'another application',
    },
  });
  root = path.join(t.home.home, ROOT);
  fs.symlinkSync(path.join(t.home.home, 'secret.txt'), path.join(root, 'link-out.txt'));
  fs.symlinkSync(path.join(t.home.home, 'outside'), path.join(root, 'dir-out'));
  fs.symlinkSync(path.join(root, 'hello.txt'), path.join(root, 'alias.txt'));
});
afterAll(() => t?.close());

describe('static root', () => {
  it('serves a file with type, length, ETag, Last-Modified and the edge headers', async () => {
    const res = await fetch(`${t.url}/hello.txt`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(res.headers.get('content-length')).toBe('1024');
    expect(res.headers.get('etag')).toMatch(/^"[0-9a-f]+-[0-9a-f]+"$/);
    expect(new Date(res.headers.get('last-modified')!).getTime()).toBe(
      Math.floor(fs.statSync(path.join(root, 'hello.txt')).mtimeMs / 1000) * 1000,
    );
    expect(res.headers.get('accept-ranges')).toBe('bytes');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    // Phase 1 of the host ran on this lean path too.
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(Buffer.from(await res.arrayBuffer()).equals(kib(1))).toBe(true);
  });

  it('answers HEAD with the headers of GET and no body', async () => {
    const res = await rawRequest(t.url, '/hello.txt', { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(res.headers['content-length']).toBe('1024');
    expect(res.body.length).toBe(0);
  });

  it('gives application/octet-stream to an unknown extension', async () => {
    const res = await fetch(`${t.url}/app.data`);
    expect(res.headers.get('content-type')).toBe('application/octet-stream');
  });

  it('answers 304 to If-None-Match and to If-Modified-Since', async () => {
    const first = await fetch(`${t.url}/hello.txt`);
    const etag = first.headers.get('etag')!;
    const byEtag = await fetch(`${t.url}/hello.txt`, { headers: { 'If-None-Match': etag } });
    expect(byEtag.status).toBe(304);
    expect(byEtag.headers.get('etag')).toBe(etag);
    expect((await byEtag.arrayBuffer()).byteLength).toBe(0);
    const byDate = await fetch(`${t.url}/hello.txt`, {
      headers: { 'If-Modified-Since': first.headers.get('last-modified')! },
    });
    expect(byDate.status).toBe(304);
    const stale = await fetch(`${t.url}/hello.txt`, { headers: { 'If-None-Match': '"other"' } });
    expect(stale.status).toBe(200);
  });

  it('answers 412 when If-Match or If-Unmodified-Since names another version, the file when they name this one', async () => {
    const first = await fetch(`${t.url}/hello.txt`);
    const etag = first.headers.get('etag')!;
    const modified = first.headers.get('last-modified')!;
    const status = async (headers: Record<string, string>, method = 'GET') =>
      (await fetch(`${t.url}/hello.txt`, { method, headers })).status;
    expect(await status({ 'If-Match': etag })).toBe(200);
    expect(await status({ 'If-Match': `"x", ${etag}` })).toBe(200);
    expect(await status({ 'If-Match': '*' })).toBe(200);
    // near misses: the weak form of the same tag, a prefix of it, another tag
    for (const other of [`W/${etag}`, etag.slice(0, -2) + '"', '"other"']) {
      const res = await fetch(`${t.url}/hello.txt`, { headers: { 'If-Match': other } });
      expect(res.status, other).toBe(412);
      expect(res.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
      expect(await res.json()).toMatchObject({ status: 412, code: 'request.precondition_failed' });
    }
    expect(await status({ 'If-Match': '"other"' }, 'HEAD')).toBe(412);
    expect(await status({ 'If-Unmodified-Since': modified })).toBe(200);
    expect(await status({ 'If-Unmodified-Since': new Date(Date.parse(modified) - 1000).toUTCString() })).toBe(412);
    expect(await status({ 'If-Unmodified-Since': 'not a date' })).toBe(200);
    // If-Match decides alone, and comes before If-None-Match
    expect(await status({ 'If-Match': etag, 'If-Unmodified-Since': 'Thu, 01 Jan 1970 00:00:00 GMT' })).toBe(200);
    expect(await status({ 'If-Match': '"other"', 'If-None-Match': etag })).toBe(412);
    expect(await status({ 'If-Match': etag, 'If-None-Match': etag })).toBe(304);
  });

  it("carries on a 304 only the headers RFC 9110 lists for it, a cache keeping the rest of its 200's", async () => {
    const first = await fetch(`${t.url}/lib/syn.loader.js`);
    expect(first.headers.get('x-content-type-options')).toBe('nosniff');
    const etag = first.headers.get('etag')!;
    const again = await fetch(`${t.url}/lib/syn.loader.js`, { headers: { 'If-None-Match': etag } });
    expect(again.status).toBe(304);
    // The connection's own headers aside (HTTP/1.1 only).
    const names = [...again.headers.keys()].filter((n) => n !== 'connection' && n !== 'keep-alive');
    expect(names.sort()).toEqual(['cache-control', 'date', 'etag', 'expires', 'vary']);
    expect(again.headers.get('etag')).toBe(etag);
    expect(again.headers.get('cache-control')).toBe(first.headers.get('cache-control'));
    expect(again.headers.get('expires')).toBe('-1');
    expect(again.headers.get('vary')).toBe('Origin');
    // The neighbours that are not 304s keep every header: a 200 for another validator, a 404.
    const changed = await fetch(`${t.url}/lib/syn.loader.js`, { headers: { 'If-None-Match': '"other"' } });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('x-content-type-options')).toBe('nosniff');
    expect(changed.headers.get('last-modified')).toBe(first.headers.get('last-modified'));
    const missing = await fetch(`${t.url}/no-such.js`, { headers: { 'If-None-Match': etag } });
    expect(missing.status).toBe(404);
    expect(missing.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('answers a Range with 206 (from memory and streamed) and an unsatisfiable one with 416', async () => {
    const small = await fetch(`${t.url}/hello.txt`, { headers: { Range: 'bytes=10-19' } });
    expect(small.status).toBe(206);
    expect(small.headers.get('content-range')).toBe('bytes 10-19/1024');
    expect(await small.text()).toBe('a'.repeat(10));

    const expected = fs.readFileSync(path.join(root, 'big.bin'));
    const big = await fetch(`${t.url}/big.bin`, { headers: { Range: 'bytes=-1000' } });
    expect(big.status).toBe(206);
    expect(big.headers.get('content-range')).toBe(
      `bytes ${expected.length - 1000}-${expected.length - 1}/${expected.length}`,
    );
    expect(Buffer.from(await big.arrayBuffer()).equals(expected.subarray(expected.length - 1000))).toBe(true);

    const whole = await fetch(`${t.url}/big.bin`);
    expect(Buffer.from(await whole.arrayBuffer()).equals(expected)).toBe(true);

    const outside = await fetch(`${t.url}/hello.txt`, { headers: { Range: 'bytes=5000-6000' } });
    expect(outside.status).toBe(416);
    expect(outside.headers.get('content-range')).toBe('bytes */1024');

    // If-Range naming another version: the whole file.
    const changed = await fetch(`${t.url}/hello.txt`, { headers: { Range: 'bytes=0-1', 'If-Range': '"old"' } });
    expect(changed.status).toBe(200);
  });

  it('serves an empty file', async () => {
    const res = await fetch(`${t.url}/empty.txt`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBe('0');
  });

  it('finds a file by any case, on every segment', async () => {
    const res = await fetch(`${t.url}/mIXED/case.txt`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('mixed case file');
  });

  it('prefers the exact name, else the first name in code-unit order among those equal ignoring case', async () => {
    expect(await (await fetch(`${t.url}/dup/readme.md`)).text()).toBe('lower');
    expect(await (await fetch(`${t.url}/dup/Readme.md`)).text()).toBe('title');
    expect(await (await fetch(`${t.url}/dup/README.md`)).text()).toBe('upper');
    // No exact match: README.md < Readme.md < readme.md in code-unit order.
    expect(await (await fetch(`${t.url}/dup/rEADME.md`)).text()).toBe('upper');
    expect(await (await fetch(`${t.url}/DUP/REadme.MD`)).text()).toBe('upper');
  });

  it('finds a file added after start by any case, and forgets one removed, without a restart', async () => {
    expect((await fetch(`${t.url}/late/New-File.txt`)).status).toBe(404);
    t.home.write(`${ROOT}/late/new-file.txt`, 'added later');
    const found = await fetch(`${t.url}/LATE/NEW-FILE.TXT`);
    expect(found.status).toBe(200);
    expect(await found.text()).toBe('added later');
    // An exact-case file added later wins over the case-insensitive choice made before.
    t.home.write(`${ROOT}/late/NEW-FILE.TXT`, 'exact now');
    expect(await (await fetch(`${t.url}/LATE/NEW-FILE.TXT`)).text()).toBe('exact now');
    fs.rmSync(path.join(root, 'late/NEW-FILE.TXT'));
    expect(await (await fetch(`${t.url}/LATE/NEW-FILE.TXT`)).text()).toBe('added later');
    fs.rmSync(path.join(root, 'late/new-file.txt'));
    expect((await fetch(`${t.url}/LATE/NEW-FILE.TXT`)).status).toBe(404);
  });

  it('serves a changed file new on the next request, even with the same size', async () => {
    t.home.write(`${ROOT}/changing.txt`, 'version-1');
    expect(await (await fetch(`${t.url}/changing.txt`)).text()).toBe('version-1');
    expect(await (await fetch(`${t.url}/changing.txt`)).text()).toBe('version-1');
    t.home.write(`${ROOT}/changing.txt`, 'version-2');
    expect(await (await fetch(`${t.url}/changing.txt`)).text()).toBe('version-2');
    // Replaced by rename (as sync writes): a new inode.
    const tmp = path.join(root, 'changing.tmp');
    fs.writeFileSync(tmp, 'version-3');
    fs.renameSync(tmp, path.join(root, 'changing.txt'));
    expect(await (await fetch(`${t.url}/changing.txt`)).text()).toBe('version-3');
  });

  it('serves index.html for a folder, redirects a folder without its slash, and never lists one', async () => {
    expect(await (await fetch(`${t.url}/`)).text()).toBe('<h1>root index</h1>');
    expect(await (await fetch(`${t.url}/docs/`)).text()).toBe('<h1>docs index</h1>');
    expect(await (await fetch(`${t.url}/DOCS/`)).text()).toBe('<h1>docs index</h1>');
    const redirect = await fetch(`${t.url}/docs?x=1`, { redirect: 'manual' });
    expect(redirect.status).toBe(301);
    expect(redirect.headers.get('location')).toBe('/docs/?x=1');
    // Never an open redirect to another host.
    const slashes = await rawRequest(t.url, '//docs');
    expect(slashes.status).toBe(301);
    expect(slashes.headers.location).toBe('/docs/');
    expect((await fetch(`${t.url}/hello.txt/`)).status).toBe(404);
    const noIndex = await fetch(`${t.url}/empty-folder/`);
    expect(noIndex.status).toBe(404);
    expect(await noIndex.text()).not.toContain('keep.txt');
  });

  it('does not serve dotfiles or dot-folders, except /.well-known/', async () => {
    for (const p of ['/.env', '/.ENV', '/.git/config', '/sub/.hidden/x.txt', '/%2eenv']) {
      const res = await rawRequest(t.url, p);
      expect(res.status, p).toBe(404);
      expect(res.text).not.toContain(SECRET);
    }
    const wellKnown = await fetch(`${t.url}/.well-known/security.txt`);
    expect(wellKnown.status).toBe(200);
    expect(await wellKnown.text()).toContain('Contact:');
  });

  it('finds names with spaces, +, % and non-ASCII characters by their percent-encoded URLs', async () => {
    expect(await (await fetch(`${t.url}/files/hello%20world%2B100%25.txt`)).text()).toBe('spaces plus percent');
    expect(await (await fetch(`${t.url}/files/hello%20world+100%25.txt`)).text()).toBe('spaces plus percent');
    expect(await (await fetch(`${t.url}/files/na%C3%AFve.txt`)).text()).toBe('non-ascii');
    expect(await (await fetch(`${t.url}/files/NA%C3%8FVE.TXT`)).text()).toBe('non-ascii');
  });

  it('never serves a name holding a control character; its neighbour, a no-break space, is served', async () => {
    expect((await fetch(`${t.url}/files/bell%07.txt`)).status).toBe(404);
    expect(await (await fetch(`${t.url}/files/tab%C2%A0.txt`)).text()).toBe('a name with a no-break space');
  });

  it('refuses a malformed percent-encoding with 400', async () => {
    for (const p of ['/files/%zz.txt', '/hello.txt%', '/%E0%A4%A']) {
      const res = await rawRequest(t.url, p);
      expect(res.status, p).toBe(400);
    }
  });

  it('applies the cache policy: loader files never cached', async () => {
    for (const p of ['/lib/syn.loader.js', '/lib/ack.loader.mjs', '/LIB/ACK.LOADER.MJS']) {
      const res = await fetch(`${t.url}${p}`);
      expect(res.status, p).toBe(200);
      expect(res.headers.get('cache-control')).toBe('no-cache, no-store');
      expect(res.headers.get('expires')).toBe('-1');
    }
  });

  it('follows a symlink that stays inside the root', async () => {
    const res = await fetch(`${t.url}/alias.txt`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBe('1024');
  });

  it('applies the host CORS policy', async () => {
    const res = await fetch(`${t.url}/hello.txt`, { headers: { Origin: 'https://elsewhere.example' } });
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('answers a missing file with the host 404 page, and other methods are not static', async () => {
    const miss = await fetch(`${t.url}/no-such-file.txt`);
    expect(miss.status).toBe(404);
    expect(miss.headers.get('content-type')).toMatch(/text\/html/);
    const post = await fetch(`${t.url}/hello.txt`, { method: 'POST' });
    expect(post.status).toBe(404);
  });
});

describe('never outside a root', () => {
  const attempts = [
    '/../secret.txt',
    '/../../secret.txt',
    '/docs/../../secret.txt',
    '/%2e%2e/secret.txt',
    '/%2E%2E/%2e%2e/secret.txt',
    '/.%2e/secret.txt',
    '/..%2fsecret.txt',
    '/%2e%2e%2f%2e%2e%2fsecret.txt',
    '/..%5csecret.txt',
    '/%2e%2e%5c%2e%2e%5csecret.txt',
    '/..\\secret.txt',
    '/\\..\\..\\secret.txt',
    '/%252e%252e/secret.txt',
    '/%252e%252e%252fsecret.txt',
    '/%c0%ae%c0%ae/secret.txt',
    '/%c0%af..%c0%afsecret.txt',
    '/%e0%80%ae%e0%80%ae/secret.txt',
    '/hello.txt%00',
    '/secret.txt%00.html',
    '/%00/../secret.txt',
    '//etc/passwd',
    '/%2fetc%2fpasswd',
    '/%2Fetc/passwd',
    '/C:/Windows/win.ini',
    '/C:%5cWindows%5cwin.ini',
    '/c%3a/secret.txt',
    '/link-out.txt',
    '/dir-out/secret.txt',
    '/DIR-OUT/SECRET.TXT',
    '/view/../../secret.txt',
    '/view/%2e%2e/%2e%2e/secret.txt',
    '/view/..%2f..%2fsecret.txt',
    '/view/SYS/../../../../secret.txt',
  ];
  for (const attempt of attempts) {
    it(`refuses ${attempt}`, async () => {
      const res = await rawRequest(t.url, attempt);
      expect([400, 404]).toContain(res.status);
      expect(res.text).not.toContain(SECRET);
    });
  }

  it('answers 400 with a problem body for a traversal', async () => {
    const res = await rawRequest(t.url, '/%2e%2e/secret.txt');
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/problem\+json/);
    expect(JSON.parse(res.text)).toMatchObject({ status: 400, code: 'request.bad_path' });
  });
});

describe('contract screens under /{ContractRequestPath}', () => {
  it('serves <ContractBasePath>/<ApplicationID>/** by any case of the prefix and path', async () => {
    const res = await fetch(`${t.url}/view/SYS/SYS010.html`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await res.text()).toBe('<h1>SYS010</h1>');
    expect((await fetch(`${t.url}/VIEW/sys/sys010.JS`)).status).toBe(200);
    expect((await fetch(`${t.url}/vi%65w/SYS/SYS010.html`)).status).toBe(200);
  });

  it('never serves another application folder', async () => {
    expect((await fetch(`${t.url}/view/OTHER/x.html`)).status).toBe(404);
    expect((await fetch(`${t.url}/view/../OTHER/x.html`)).status).toBe(404);
  });

  it('the static root never answers under the prefix', async () => {
    expect((await fetch(`${t.url}/view/in-static-root.txt`)).status).toBe(404);
    expect((await fetch(`${t.url}/VIEW/in-static-root.txt`)).status).toBe(404);
    expect((await fetch(`${t.url}/vi%65w/in-static-root.txt`)).status).toBe(404);
  });

  it('serves a contract file created after start (e.g. by sync)', async () => {
    t.home.write('contracts/wwwroot/HDS/NEW/NEW010.html', 'new screen');
    expect(await (await fetch(`${t.url}/view/new/new010.html`)).text()).toBe('new screen');
  });
});

describe('settings that change serving', () => {
  it('the host edge (WithOnlyIPs) applies to static, contract and shared-file responses', async () => {
    const h = await startWwwroot({
      appSettings: { WithOnlyIPs: ['10.9.8.7'] },
      moduleConfig: { SharedFileConfigPath: '../config/shared.json' },
      files: {
        [`${ROOT}/a.txt`]: 'a',
        'contracts/wwwroot/HDS/a.html': 'a',
        'shared/s.css': 's',
        'config/shared.json': { items: [{ requestPath: '/s.css', hostFilePath: '../shared/s.css' }] },
      },
    });
    try {
      for (const p of ['/a.txt', '/view/a.html', '/s.css', '/shared-files/manifest']) {
        const res = await fetch(`${h.url}${p}`);
        expect(res.status, p).toBe(403);
        expect(await res.text(), p).toContain('host.ip_not_allowed');
      }
    } finally {
      await h.close();
    }
  });

  it('StaticFileCacheMaxAge above 0 gives public, max-age=N (loader files still not cached)', async () => {
    const h = await startWwwroot({
      appSettings: { StaticFileCacheMaxAge: 3600 },
      files: { [`${ROOT}/a.css`]: 'a{}', [`${ROOT}/syn.loader.js`]: 'x' },
    });
    try {
      expect((await fetch(`${h.url}/a.css`)).headers.get('cache-control')).toBe('public, max-age=3600');
      expect((await fetch(`${h.url}/syn.loader.js`)).headers.get('cache-control')).toBe('no-cache, no-store');
    } finally {
      await h.close();
    }
  });

  it('ContractRequestPath and the ApplicationID choose the contract folder; a missing folder is 404', async () => {
    const h = await startWwwroot({
      appSettings: { ApplicationID: 'APP1' },
      moduleConfig: { ContractRequestPath: '/screens/' },
      files: {
        'contracts/wwwroot/APP1/a.html': 'app1 screen',
        [`${ROOT}/screens/a.html`]: 'static',
      },
    });
    try {
      expect(await (await fetch(`${h.url}/screens/a.html`)).text()).toBe('app1 screen');
      expect((await fetch(`${h.url}/view/a.html`)).status).toBe(404);
      fs.rmSync(path.join(h.home.home, 'contracts'), { recursive: true });
      expect((await fetch(`${h.url}/screens/a.html`)).status).toBe(404);
    } finally {
      await h.close();
    }
  });
});

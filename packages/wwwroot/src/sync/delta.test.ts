import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isTemporaryFileName } from '@ack/host/serving';
import {
  multipartBody,
  rawPost,
  testAppSettings,
  useTestHosts,
  type FormPart,
  type TestHome,
  type TestHost,
} from '@ack/host/test-support';
import { wwwrootModule } from '../index.js';
import { basicAuth } from '../test-support/test-fixture.js';

// The listing and the batch upload (docs/sync.md "The delta"), over real sockets.

const TOKEN = 'delta-token';
const AUTH = { Authorization: basicAuth(TOKEN) };
const sha = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');
const hosts = useTestHosts();

async function start(files: Record<string, string> = {}, maxBytes = 1000): Promise<TestHost & { home: TestHome }> {
  const home = hosts.home(
    testAppSettings({
      AppSettings: { LoadModules: ['wwwroot'], Security: { MaxContractSyncFileBytes: maxBytes } },
      Kestrel: { Limits: { MaxRequestBodySize: 64 * 1024 * 1024 } },
    }),
    {
      'modules/wwwroot/module.json': { ModuleID: 'wwwroot', ModuleConfig: { FileSyncTokens: [TOKEN] } },
      ...Object.fromEntries(Object.entries(files).map(([k, v]) => [`contracts/wwwroot/${k}`, v])),
    },
  );
  return { ...(await hosts.start(home, { wwwroot: wwwrootModule })), home };
}

const contracts = (h: { home: TestHome }, ...parts: string[]) =>
  path.join(h.home.home, 'contracts', 'wwwroot', ...parts);

interface Listing {
  status: number;
  type: string;
  entries: Array<{ path: string; size: number; sha256: string }>;
  done?: { done: true; files: number; bytes: number; batch?: { maxFiles: number } };
  body: string;
}

async function list(url: string, query: string, headers: Record<string, string> = AUTH): Promise<Listing> {
  const res = await fetch(`${url}/wwwroot/api/sync/list?${query}`, { headers });
  const body = await res.text();
  const type = res.headers.get('content-type') ?? '';
  if (!type.includes('ndjson')) return { status: res.status, type, entries: [], body };
  const lines = body
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const done = lines.pop() as Listing['done'];
  return { status: res.status, type, entries: lines as Listing['entries'], done, body };
}

function batch(url: string, parts: FormPart[]) {
  const { body, contentType } = multipartBody(parts);
  return fetch(`${url}/wwwroot/api/sync/batch`, {
    method: 'POST',
    body,
    headers: { ...AUTH, 'Content-Type': contentType },
  });
}

const file = (filePath: string, content: string): FormPart[] => [
  { name: 'filePath', content: filePath },
  { name: 'file', content, filename: 'f.bin' },
];

describe('GET /wwwroot/api/sync/list', () => {
  it('lists each file under the prefix with size and sha256, sorted, and a closing line with the batch limits', async () => {
    const h = await start({ 'HDS/a.html': 'aa', 'HDS/sub/b.js': 'bbb', 'OTHER/c.css': 'c' });
    const all = await list(h.url, 'moduleName=wwwroot');
    expect(all.status).toBe(200);
    expect(all.type).toContain('application/x-ndjson');
    expect(all.entries).toEqual([
      { path: 'HDS/a.html', size: 2, sha256: sha('aa') },
      { path: 'HDS/sub/b.js', size: 3, sha256: sha('bbb') },
      { path: 'OTHER/c.css', size: 1, sha256: sha('c') },
    ]);
    expect(all.done).toMatchObject({ done: true, files: 3, bytes: 6, batch: { maxFiles: 1000 } });

    const hds = await list(h.url, 'ModuleName=WWWROOT&prefix=/HDS/');
    expect(hds.entries.map((e) => e.path)).toEqual(['HDS/a.html', 'HDS/sub/b.js']);
    // A prefix naming one file lists that file; a prefix that does not exist lists nothing.
    expect((await list(h.url, 'moduleName=wwwroot&prefix=HDS/a.html')).entries.map((e) => e.path)).toEqual([
      'HDS/a.html',
    ]);
    const none = await list(h.url, 'moduleName=wwwroot&prefix=NOPE');
    expect(none.entries).toEqual([]);
    expect(none.done).toMatchObject({ files: 0 });
  });

  it('keeps digests fresh: an upload, a batch and an edit behind its back are all seen', async () => {
    const h = await start({ 'HDS/a.html': 'one' });
    expect((await list(h.url, 'moduleName=wwwroot')).entries[0]!.sha256).toBe(sha('one'));
    expect(
      (await batch(h.url, [{ name: 'moduleName', content: 'wwwroot' }, ...file('HDS/a.html', 'two')])).status,
    ).toBe(200);
    expect((await list(h.url, 'moduleName=wwwroot')).entries[0]!.sha256).toBe(sha('two'));
    // Same size, written in place by something else: the mtime moves, the digest follows.
    const target = contracts(h, 'HDS', 'a.html');
    fs.writeFileSync(target, 'six');
    fs.utimesSync(target, new Date(), new Date(Date.now() + 5000));
    expect((await list(h.url, 'moduleName=wwwroot')).entries[0]!.sha256).toBe(sha('six'));
  });

  it('sees a same-size edit behind its back even with the modification time put back (the change time moves)', async () => {
    const h = await start({ 'HDS/a.html': 'one' });
    const target = contracts(h, 'HDS', 'a.html');
    // Whole seconds, so that the time put back is the very same to the nanosecond.
    fs.utimesSync(target, 1_700_000_000, 1_700_000_000);
    expect((await list(h.url, 'moduleName=wwwroot')).entries[0]!.sha256).toBe(sha('one'));
    fs.writeFileSync(target, 'two');
    fs.utimesSync(target, 1_700_000_000, 1_700_000_000);
    expect(fs.statSync(target, { bigint: true }).mtimeNs).toBe(1_700_000_000_000_000_000n);
    expect((await list(h.url, 'moduleName=wwwroot')).entries[0]!.sha256).toBe(sha('two'));
  });

  it('lists a big folder in order, folder by folder, with names that need escaping, as JSON.stringify writes them', async () => {
    // More files than one slice of the walk (256), with folders among them and odd names.
    const files: Record<string, string> = {};
    for (let i = 0; i < 600; i++) files[`HDS/f${String(i).padStart(3, '0')}.html`] = `file ${i}`;
    for (const name of ['f100', 'f299.html.d', 'a', 'z']) files[`HDS/${name}/in.html`] = name;
    for (const name of ['q"b.html', 'back\\slash.html', 'ü €.html', 'tab\tname.html', 'f300'])
      files[`HDS/${name}`] = name;
    const h = await start(files, 10_000);
    const listing = await list(h.url, 'moduleName=wwwroot&prefix=HDS');
    // Each folder's names in code-unit order, a folder's files where its name sorts.
    const order = (dir: string): string[] =>
      fs
        .readdirSync(contracts(h, dir), { withFileTypes: true })
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
        .flatMap((e) => (e.isDirectory() ? order(`${dir}/${e.name}`) : [`${dir}/${e.name}`]));
    expect(listing.entries.map((e) => e.path)).toEqual(order('HDS'));
    expect(listing.entries).toHaveLength(600 + 4 + 5);
    for (const e of listing.entries)
      expect(e).toEqual({ path: e.path, size: Buffer.byteLength(files[e.path]!), sha256: sha(files[e.path]!) });
    expect(listing.body.split('\n').slice(0, -2)).toEqual(listing.entries.map((e) => JSON.stringify(e)));
    expect(listing.done).toMatchObject({ files: 609 });
  });

  it('never names a file outside the module folder, symlinks included, and skips temporary upload files', async () => {
    const h = await start({ 'HDS/in.html': 'in' });
    const outside = path.join(h.home.home, 'secret');
    fs.mkdirSync(outside, { recursive: true });
    fs.writeFileSync(path.join(outside, 'key.txt'), 'secret');
    fs.symlinkSync(path.join(outside, 'key.txt'), contracts(h, 'HDS', 'link-out.txt'));
    fs.symlinkSync(outside, contracts(h, 'HDS', 'dir-out'));
    fs.symlinkSync(contracts(h, 'HDS', 'in.html'), contracts(h, 'HDS', 'link-in.html')); // the neighbour: stays inside
    fs.writeFileSync(contracts(h, 'HDS', '.in.html.0123456789ab.ack-tmp'), 'half');
    fs.writeFileSync(contracts(h, 'HDS', '.htaccess'), 'kept'); // a dotfile that is not a temporary file
    const listing = await list(h.url, 'moduleName=wwwroot');
    expect(listing.entries.map((e) => e.path)).toEqual(['HDS/.htaccess', 'HDS/in.html', 'HDS/link-in.html']);
    expect(listing.body).not.toContain('secret');
    // A prefix through the folder symlink is refused like an upload there.
    const through = await list(h.url, 'moduleName=wwwroot&prefix=HDS/dir-out');
    expect(through.status).toBe(400);
    expect(JSON.parse(through.body)).toMatchObject({ code: 'sync.invalid_path' });
  });

  it('refuses what upload refuses: token, module, a prefix that leaves the folder; the neighbours are accepted', async () => {
    const h = await start({ 'HDS/..a': 'dots in a name' });
    expect((await list(h.url, 'moduleName=wwwroot', {})).status).toBe(401);
    const wrong = await list(h.url, 'moduleName=wwwroot', { Authorization: basicAuth('nope') });
    expect(wrong.status).toBe(401);
    expect(JSON.parse(wrong.body)).toMatchObject({ code: 'sync.invalid_token' });
    expect(JSON.parse(wrong.body).detail).not.toContain('nope');
    const cases: Array<[string, string]> = [
      ['', 'sync.missing_field'],
      ['moduleName=nope', 'sync.invalid_module'],
      ['moduleName=wwwroot&prefix=../modules', 'sync.invalid_path'],
      ['moduleName=wwwroot&prefix=HDS/../../x', 'sync.invalid_path'],
      ['moduleName=wwwroot&prefix=C:/x', 'sync.invalid_path'],
      ['moduleName=wwwroot&prefix=%00', 'sync.invalid_path'],
    ];
    for (const [query, code] of cases) {
      const res = await list(h.url, query);
      expect(res.status, query).toBe(400);
      expect(res.type).toContain('application/problem+json');
      expect(JSON.parse(res.body), query).toMatchObject({ code });
    }
    expect((await list(h.url, 'moduleName=transact')).status).toBe(200);
    expect((await list(h.url, 'moduleName=wwwroot&prefix=HDS/..a')).entries.map((e) => e.path)).toEqual(['HDS/..a']);
    expect((await list(h.url, 'moduleName=wwwroot&prefix=./')).entries.map((e) => e.path)).toEqual(['HDS/..a']);
  });
});

describe('POST /wwwroot/api/sync/batch', () => {
  it('commits each file on its own: one refused, the others land, each with its own outcome', async () => {
    const h = await start({ 'HDS/old.html': 'old', 'HDS/gone.html': 'bye' });
    const res = await batch(h.url, [
      { name: 'moduleName', content: 'wwwroot' },
      ...file('HDS/new.html', 'new'),
      ...file('../escape.html', 'evil'),
      ...file('HDS/old.html', 'changed'),
      ...file('HDS/big.html', 'x'.repeat(1001)),
      ...file('HDS/limit.html', 'y'.repeat(1000)), // the neighbour of too big: exactly the limit
      { name: 'deletePath', content: 'HDS/gone.html' },
      { name: 'deletePath', content: 'HDS/../../x' },
    ]);
    expect(res.status).toBe(200);
    const answer = (await res.json()) as { module: string; results: Array<Record<string, unknown>> };
    expect(answer.module).toBe('wwwroot');
    expect(answer.results).toMatchObject([
      { path: 'HDS/new.html', change: 'Created', ok: true, bytes: 3, sha256: sha('new'), existed: false },
      { path: '../escape.html', ok: false, status: 400, code: 'sync.invalid_path' },
      { path: 'HDS/old.html', change: 'Changed', ok: true, sha256: sha('changed'), existed: true },
      { path: 'HDS/big.html', ok: false, status: 413, code: 'sync.file_too_large' },
      { path: 'HDS/limit.html', ok: true, bytes: 1000 },
      { path: 'HDS/gone.html', change: 'Deleted', ok: true, existed: true },
      { path: 'HDS/../../x', change: 'Deleted', ok: false, code: 'sync.invalid_path' },
    ]);
    expect(fs.readFileSync(contracts(h, 'HDS', 'new.html'), 'utf8')).toBe('new');
    expect(fs.readFileSync(contracts(h, 'HDS', 'old.html'), 'utf8')).toBe('changed');
    expect(fs.existsSync(contracts(h, 'HDS', 'big.html'))).toBe(false);
    expect(fs.existsSync(contracts(h, 'HDS', 'gone.html'))).toBe(false);
    expect(fs.existsSync(path.join(h.home.home, 'contracts', 'escape.html'))).toBe(false);
    const leftovers = fs
      .readdirSync(contracts(h), { recursive: true, encoding: 'utf8' })
      .filter((f) => isTemporaryFileName(path.basename(f)));
    expect(leftovers).toEqual([]);
    // The new bytes are served at once (the cache was told).
    expect(await (await fetch(`${h.url}/view/new.html`)).text()).toBe('new');
  });

  it('refuses alone a path the file system refuses (a name too long, a file where a folder must be); the others land', async () => {
    const h = await start({ 'HDS/plain': 'a file, not a folder' });
    const long = `HDS/${'n'.repeat(256)}.html`;
    const longest = `HDS/${'n'.repeat(250)}.html`; // the neighbour: 255 bytes, a name the file system takes
    const res = await batch(h.url, [
      { name: 'moduleName', content: 'wwwroot' },
      ...file(long, 'too long'),
      ...file('HDS/plain/inside.html', 'no folder'),
      ...file(longest, 'fits'),
      ...file('HDS/ok.html', 'ok'),
      { name: 'deletePath', content: long },
      { name: 'deletePath', content: 'HDS/plain/inside.html' },
    ]);
    expect(res.status).toBe(200);
    const answer = (await res.json()) as { results: Array<Record<string, unknown>> };
    expect(answer.results).toMatchObject([
      { path: long, ok: false, status: 400, code: 'request.path_too_long' },
      { path: 'HDS/plain/inside.html', ok: false, status: 409, code: 'request.path_conflict' },
      { path: longest, ok: true, change: 'Created' },
      { path: 'HDS/ok.html', ok: true, change: 'Created' },
      { path: long, change: 'Deleted', ok: false, status: 400, code: 'request.path_too_long' },
      { path: 'HDS/plain/inside.html', change: 'Deleted', ok: true, existed: false },
    ]);
    expect(fs.readFileSync(contracts(h, 'HDS', 'ok.html'), 'utf8')).toBe('ok');
    expect(fs.readFileSync(contracts(h, 'HDS', 'plain'), 'utf8')).toBe('a file, not a folder');
    const leftovers = fs
      .readdirSync(contracts(h), { recursive: true, encoding: 'utf8' })
      .filter((f) => isTemporaryFileName(path.basename(f)));
    expect(leftovers).toEqual([]);
  });

  it('lands every file whole whatever its size: many small ones flushed together, big ones streamed', async () => {
    const h = await start({}, 3 * 1024 * 1024);
    const bytesOf = (size: number, seed: number) => Buffer.alloc(size, 97 + (seed % 26));
    // 1 MiB stays in memory, one byte more is streamed; past the limit is refused alone.
    const sizes = [1024 * 1024, 1024 * 1024 + 1, 3 * 1024 * 1024, 3 * 1024 * 1024 + 1, 0, 1];
    for (let i = 0; i < 30; i++) sizes.push(100 + i * 37);
    const parts: FormPart[] = [{ name: 'moduleName', content: 'wwwroot' }];
    sizes.forEach((size, i) =>
      parts.push(
        { name: 'filePath', content: `HDS/s${i}.bin` },
        { name: 'file', content: bytesOf(size, i), filename: 'f.bin' },
      ),
    );
    const res = await batch(h.url, parts);
    expect(res.status, await res.clone().text()).toBe(200);
    const { results } = (await res.json()) as { results: Array<Record<string, unknown>> };
    sizes.forEach((size, i) => {
      if (size > 3 * 1024 * 1024) {
        expect(results[i]).toMatchObject({ ok: false, status: 413, code: 'sync.file_too_large' });
        expect(fs.existsSync(contracts(h, 'HDS', `s${i}.bin`))).toBe(false);
        return;
      }
      expect(results[i]).toMatchObject({ ok: true, bytes: size, sha256: sha(bytesOf(size, i)) });
      expect(sha(fs.readFileSync(contracts(h, 'HDS', `s${i}.bin`)))).toBe(sha(bytesOf(size, i)));
    });
    const leftovers = fs
      .readdirSync(contracts(h), { recursive: true, encoding: 'utf8' })
      .filter((f) => isTemporaryFileName(path.basename(f)));
    expect(leftovers).toEqual([]);
  });

  it('refuses, file by file, a path through a symlink that leads out, however many files share its folder', async () => {
    const h = await start({ 'HDS/in/a.html': 'a' });
    const outside = path.join(h.home.home, 'outside');
    fs.mkdirSync(outside);
    fs.writeFileSync(path.join(outside, 'key.txt'), 'secret');
    fs.symlinkSync(outside, contracts(h, 'HDS', 'out'));
    fs.symlinkSync(contracts(h, 'HDS', 'in'), contracts(h, 'HDS', 'alias')); // the neighbour: stays inside
    fs.symlinkSync(path.join(outside, 'key.txt'), contracts(h, 'HDS', 'in', 'key-link.html'));
    const res = await batch(h.url, [
      { name: 'moduleName', content: 'wwwroot' },
      ...file('HDS/in/b.html', 'b'),
      ...file('HDS/out/x.html', 'x'),
      ...file('HDS/in/key-link.html', 'k'), // a file in a folder already resolved, itself a symlink out
      ...file('HDS/alias/c.html', 'c'),
      ...file('HDS/out/new/y.html', 'y'),
      ...file('HDS/new/d.html', 'd'), // a folder the batch creates
      ...file('HDS/new/e.html', 'e'),
    ]);
    expect(res.status).toBe(200);
    const { results } = (await res.json()) as { results: Array<Record<string, unknown>> };
    expect(results.map((r) => [r.path, r.ok, r.code])).toEqual([
      ['HDS/in/b.html', true, undefined],
      ['HDS/out/x.html', false, 'sync.invalid_path'],
      ['HDS/in/key-link.html', false, 'sync.invalid_path'],
      ['HDS/alias/c.html', true, undefined],
      ['HDS/out/new/y.html', false, 'sync.invalid_path'],
      ['HDS/new/d.html', true, undefined],
      ['HDS/new/e.html', true, undefined],
    ]);
    expect(fs.readdirSync(outside)).toEqual(['key.txt']);
    expect(fs.readFileSync(path.join(outside, 'key.txt'), 'utf8')).toBe('secret');
    expect(fs.readFileSync(contracts(h, 'HDS', 'in', 'c.html'), 'utf8')).toBe('c');
    expect(fs.readFileSync(contracts(h, 'HDS', 'new', 'e.html'), 'utf8')).toBe('e');
  });

  it('refuses a malformed batch as a whole and writes nothing; a well-formed neighbour is taken', async () => {
    const h = await start();
    const cases: Array<[string, FormPart[], string]> = [
      [
        'a file without its filePath',
        [
          { name: 'moduleName', content: 'wwwroot' },
          { name: 'file', content: 'x', filename: 'f' },
        ],
        'sync.invalid_form',
      ],
      [
        'two paths then one file',
        [
          { name: 'moduleName', content: 'wwwroot' },
          { name: 'filePath', content: 'HDS/a' },
          { name: 'filePath', content: 'HDS/b' },
          { name: 'file', content: 'x', filename: 'f' },
        ],
        'sync.invalid_form',
      ],
      [
        'a filePath left without a file',
        [{ name: 'moduleName', content: 'wwwroot' }, ...file('HDS/a', 'x'), { name: 'filePath', content: 'HDS/b' }],
        'sync.invalid_form',
      ],
      ['no module', file('HDS/a', 'x'), 'sync.missing_field'],
      ['an unknown module', [{ name: 'moduleName', content: 'nope' }, ...file('HDS/a', 'x')], 'sync.invalid_module'],
      ['nothing to do', [{ name: 'moduleName', content: 'wwwroot' }], 'sync.missing_field'],
      [
        'a file in another field',
        [
          { name: 'moduleName', content: 'wwwroot' },
          { name: 'filePath', content: 'HDS/a' },
          { name: 'other', content: 'x', filename: 'f' },
        ],
        'sync.unexpected_file',
      ],
    ];
    for (const [what, parts, code] of cases) {
      const res = await batch(h.url, parts);
      expect(res.status, what).toBe(400);
      expect(await res.json(), what).toMatchObject({ code });
    }
    expect(fs.existsSync(contracts(h, 'HDS'))).toBe(false);
    const ok = await batch(h.url, [{ name: 'moduleName', content: 'wwwroot' }, ...file('HDS/a', 'x')]);
    expect(ok.status).toBe(200);
    expect(fs.readFileSync(contracts(h, 'HDS', 'a'), 'utf8')).toBe('x');
  });

  it('counts the whole body against the request limit: 413 and nothing written', async () => {
    const home = hosts.home(
      testAppSettings({ AppSettings: { LoadModules: ['wwwroot'] }, Kestrel: { Limits: { MaxRequestBodySize: 2048 } } }),
      { 'modules/wwwroot/module.json': { ModuleID: 'wwwroot', ModuleConfig: { FileSyncTokens: [TOKEN] } } },
    );
    const h = await hosts.start(home, { wwwroot: wwwrootModule });
    const parts: FormPart[] = [{ name: 'moduleName', content: 'wwwroot' }];
    for (let i = 0; i < 4; i++) parts.push(...file(`HDS/f${i}`, 'z'.repeat(700)));
    const { body, contentType } = multipartBody(parts);
    const answer = await rawPost(h.url, '/wwwroot/api/sync/batch', body, { ...AUTH, 'Content-Type': contentType });
    expect(answer.status).toBe(413);
    expect(answer.body).toContain('request.body_too_large');
    expect(fs.existsSync(path.join(home.home, 'contracts', 'wwwroot', 'HDS'))).toBe(false);
  });
});

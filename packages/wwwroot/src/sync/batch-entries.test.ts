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
import { basicAuth, syncUpload } from '../test-support/test-fixture.js';

// A batch does exactly what its form says (docs/sync.md "Batches"), over real sockets: fields pair
// by the order sent whatever their spelling, files commit in the order sent (a file and a folder
// of the same name), a batch refused whole leaves no folder behind, a symbolic link that loops is
// a 4xx for that entry alone, and the form's text is bounded (the limits in the listing's closing
// line). Each refusal beside its nearest neighbour that is taken.

const TOKEN = 'batch-entries-token';
const AUTH = { Authorization: basicAuth(TOKEN) };
const hosts = useTestHosts();

async function start(
  files: Record<string, string> = {},
  settings: Record<string, unknown> = {},
): Promise<TestHost & { home: TestHome }> {
  const home = hosts.home(
    testAppSettings({
      AppSettings: { LoadModules: ['wwwroot'], Security: { MaxContractSyncFileBytes: 1000 }, ...settings },
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

async function batch(url: string, parts: FormPart[]) {
  const { body, contentType } = multipartBody(parts);
  const answer = await rawPost(url, '/wwwroot/api/sync/batch', body, { ...AUTH, 'Content-Type': contentType });
  const json = answer.body.startsWith('{') ? (JSON.parse(answer.body) as Record<string, unknown>) : {};
  return {
    status: answer.status,
    body: answer.body,
    json,
    results: (json.results ?? []) as Array<Record<string, unknown>>,
  };
}

const file = (filePath: string, content: string, name = 'filePath'): FormPart[] => [
  { name, content: filePath },
  { name: 'file', content, filename: 'f.bin' },
];
const MODULE: FormPart = { name: 'moduleName', content: 'wwwroot' };

/** Every file and folder under the module's contract folder (temporary files included). */
const tree = (h: { home: TestHome }) =>
  fs.existsSync(contracts(h)) ? fs.readdirSync(contracts(h), { recursive: true, encoding: 'utf8' }).sort() : [];

async function listing(url: string, query: string) {
  const res = await fetch(`${url}/wwwroot/api/sync/list?${query}`, { headers: AUTH });
  const body = await res.text();
  if (!(res.headers.get('content-type') ?? '').includes('ndjson'))
    return { status: res.status, body, paths: [], done: {} };
  const lines = body
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const done = lines.pop()!;
  return { status: res.status, body, paths: lines.map((l) => l.path), done };
}

describe('a batch pairs and commits its entries in the order sent', () => {
  it('pairs each file with its own filePath whatever the spelling of the field name', async () => {
    const h = await start();
    const mixed = await batch(h.url, [
      MODULE,
      ...file('HDS/one.txt', 'first', 'filePath'),
      ...file('HDS/two.txt', 'second', 'FILEPATH'),
      ...file('HDS/three.txt', 'third', 'filePath'),
    ]);
    expect(mixed.status, mixed.body).toBe(200);
    expect(mixed.results.map((r) => [r.path, r.ok])).toEqual([
      ['HDS/one.txt', true],
      ['HDS/two.txt', true],
      ['HDS/three.txt', true],
    ]);
    expect(fs.readFileSync(contracts(h, 'HDS', 'one.txt'), 'utf8')).toBe('first');
    expect(fs.readFileSync(contracts(h, 'HDS', 'two.txt'), 'utf8')).toBe('second');
    expect(fs.readFileSync(contracts(h, 'HDS', 'three.txt'), 'utf8')).toBe('third');
    // The neighbour: one spelling all through, and deletions spelt two ways, both taken.
    const same = await batch(h.url, [
      { name: 'MODULENAME', content: 'wwwroot' },
      ...file('HDS/four.txt', 'fourth'),
      ...file('HDS/five.txt', 'fifth'),
      { name: 'deletePath', content: 'HDS/one.txt' },
      { name: 'DeletePath', content: 'HDS/two.txt' },
    ]);
    expect(same.results.map((r) => [r.path, r.change, r.ok])).toEqual([
      ['HDS/four.txt', 'Created', true],
      ['HDS/five.txt', 'Created', true],
      ['HDS/one.txt', 'Deleted', true],
      ['HDS/two.txt', 'Deleted', true],
    ]);
    expect(fs.readFileSync(contracts(h, 'HDS', 'five.txt'), 'utf8')).toBe('fifth');
  });

  it('commits a file before a later entry that needs a folder of the same name, and the other way round', async () => {
    const h = await start({ 'HDS/keep.txt': 'k' });
    const fileFirst = await batch(h.url, [MODULE, ...file('HDS/e/f', 'a file'), ...file('HDS/e/f/g.txt', 'inside')]);
    expect(fileFirst.status, fileFirst.body).toBe(200);
    expect(fileFirst.results).toMatchObject([
      { path: 'HDS/e/f', ok: true, change: 'Created' },
      { path: 'HDS/e/f/g.txt', ok: false, status: 409, code: 'request.path_conflict' },
    ]);
    expect(fs.readFileSync(contracts(h, 'HDS', 'e', 'f'), 'utf8')).toBe('a file');
    // The neighbour: the folder's file first, then the path as a file, which is now a folder.
    const folderFirst = await batch(h.url, [MODULE, ...file('HDS/x/y/z.txt', 'inside'), ...file('HDS/x/y', 'a file')]);
    expect(folderFirst.results).toMatchObject([
      { path: 'HDS/x/y/z.txt', ok: true, change: 'Created' },
      { path: 'HDS/x/y', ok: false, status: 400, code: 'sync.not_a_file' },
    ]);
    expect(fs.readFileSync(contracts(h, 'HDS', 'x', 'y', 'z.txt'), 'utf8')).toBe('inside');
    expect(tree(h).filter((f) => isTemporaryFileName(path.basename(f)))).toEqual([]);
  });

  it('leaves no folder behind when refused whole (one file over the count); the count itself is taken', async () => {
    const h = await start({ 'HDS/keep.txt': 'k' });
    const before = tree(h);
    const parts = (count: number) => {
      const out: FormPart[] = [MODULE];
      for (let i = 0; i < count; i++) out.push(...file(`HDS/new${i % 50}/f${i}.txt`, `${i}`));
      return out;
    };
    const over = await batch(h.url, parts(1001));
    expect(over.status, over.body).toBe(400);
    expect(over.json).toMatchObject({ code: 'sync.invalid_form' });
    expect(tree(h)).toEqual(before);
    const atLimit = await batch(h.url, parts(1000));
    expect(atLimit.status, atLimit.body).toBe(200);
    expect(atLimit.results.every((r) => r.ok)).toBe(true);
    expect(fs.readFileSync(contracts(h, 'HDS', 'new49', 'f999.txt'), 'utf8')).toBe('999');
  }, 60_000); // two batches of a thousand files: more than mutation testing's 5 s on a busy machine
});

describe('a symbolic link that loops', () => {
  it('is a 409 for that entry alone in a batch, an upload and a listing, naming no host path', async () => {
    const h = await start({ 'HDS/ok.txt': 'ok' }, { IsExceptionDetailText: true, RunningEnvironment: 'D' });
    fs.symlinkSync('loop', contracts(h, 'HDS', 'loop'));
    fs.symlinkSync('b', contracts(h, 'HDS', 'a'));
    fs.symlinkSync('a', contracts(h, 'HDS', 'b'));
    const answer = await batch(h.url, [
      MODULE,
      ...file('HDS/loop/x.txt', 'x'),
      ...file('HDS/new.txt', 'new'),
      ...file('HDS/a/y.txt', 'y'),
      { name: 'deletePath', content: 'HDS/b/z.txt' },
      { name: 'deletePath', content: 'HDS/ok.txt' },
    ]);
    expect(answer.status, answer.body).toBe(200);
    expect(answer.results).toMatchObject([
      { path: 'HDS/loop/x.txt', ok: false, status: 409, code: 'request.path_conflict' },
      { path: 'HDS/new.txt', ok: true },
      { path: 'HDS/a/y.txt', ok: false, status: 409, code: 'request.path_conflict' },
      { path: 'HDS/b/z.txt', ok: false, status: 409, code: 'request.path_conflict' },
      { path: 'HDS/ok.txt', ok: true, change: 'Deleted' },
    ]);
    expect(answer.body).not.toContain(h.home.home);
    expect(fs.readFileSync(contracts(h, 'HDS', 'new.txt'), 'utf8')).toBe('new');

    const upload = await syncUpload(
      h.url,
      TOKEN,
      { moduleName: 'wwwroot', changeType: 'Created', filePath: 'HDS/loop/u.txt' },
      'u',
    );
    const uploadBody = await upload.text();
    expect(upload.status, uploadBody).toBe(409);
    expect(uploadBody).not.toContain(h.home.home);
    const neighbour = await syncUpload(
      h.url,
      TOKEN,
      { moduleName: 'wwwroot', changeType: 'Created', filePath: 'HDS/u.txt' },
      'u',
    );
    expect(neighbour.status).toBe(200);

    // The listing leaves a looping link out; a prefix through one is a 409.
    const all = await listing(h.url, 'moduleName=wwwroot');
    expect(all.status).toBe(200);
    expect(all.paths).toEqual(['HDS/new.txt', 'HDS/u.txt']);
    const through = await listing(h.url, 'moduleName=wwwroot&prefix=HDS/loop');
    expect(through.status, through.body).toBe(409);
    expect(through.body).not.toContain(h.home.home);
    const under = await listing(h.url, 'moduleName=wwwroot&prefix=HDS/a/deeper');
    expect(under.status, under.body).toBe(409);
    expect((await listing(h.url, 'moduleName=wwwroot&prefix=HDS/new.txt')).paths).toEqual(['HDS/new.txt']);
  });
});

describe("a batch form's text is bounded", () => {
  const deletes = (count: number, length: number): FormPart[] =>
    Array.from({ length: count }, (_, i) => ({
      name: 'deletePath',
      content: `HDS/${String(i).padStart(6, '0')}`.padEnd(length, 'p'),
    }));

  it('announces its limits in the listing closing line', async () => {
    const h = await start();
    const { done } = await listing(h.url, 'moduleName=wwwroot');
    expect(done).toMatchObject({
      batch: { maxFiles: 1000, maxFields: 2032, maxFieldBytes: 4096, maxFieldsBytes: 1024 * 1024 },
    });
  });

  it('takes a path of exactly maxFieldBytes and refuses one byte more', async () => {
    const h = await start();
    const at = await batch(h.url, [MODULE, ...deletes(1, 4096)]);
    expect(at.status, at.body).toBe(200);
    const over = await batch(h.url, [MODULE, ...deletes(1, 4097)]);
    expect(over.status).toBe(400);
    expect(over.json).toMatchObject({ code: 'sync.invalid_form', detail: 'A field is over 4096 bytes.' });
  });

  it('takes maxFields fields and refuses one more', async () => {
    const h = await start();
    const at = await batch(h.url, [MODULE, ...deletes(2031, 10)]);
    expect(at.status, at.body).toBe(200);
    expect(at.results).toHaveLength(2031);
    const over = await batch(h.url, [MODULE, ...deletes(2032, 10)]);
    expect(over.status).toBe(400);
    expect(over.json).toMatchObject({ code: 'sync.invalid_form', detail: 'At most 2032 fields are accepted.' });
  });

  it('takes fields of exactly maxFieldsBytes together and refuses one byte more with 413', async () => {
    const h = await start({ 'HDS/keep.txt': 'k' });
    // moduleName + wwwroot: 17 bytes; each deletePath field: 10 + its value.
    const total = 1024 * 1024;
    const count = 400;
    const each = Math.floor((total - 17) / count) - 10;
    const parts = [MODULE, ...deletes(count, each)];
    const rest = total - 17 - count * (10 + each);
    parts.push({ name: 'deletePath', content: `HDS/last`.padEnd(rest - 10, 'q') });
    const at = await batch(h.url, parts);
    expect(at.status, at.body.slice(0, 300)).toBe(200);
    parts[parts.length - 1] = { name: 'deletePath', content: `HDS/last`.padEnd(rest - 9, 'q') };
    const over = await batch(h.url, [...parts, ...file('HDS/keep.txt', 'changed')]);
    expect(over.status).toBe(413);
    expect(over.json).toMatchObject({ code: 'sync.form_too_large' });
    expect(fs.readFileSync(contracts(h, 'HDS', 'keep.txt'), 'utf8')).toBe('k');
  });
});

import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { type AckModuleFactory } from '@ack/host';
import { isTemporaryFileName } from '@ack/host/serving';
import { testAppSettings, useTestHosts, waitFor, type TestHome, type TestHost } from '@ack/host/test-support';
import { wwwrootModule } from '../index.js';

const TOKENS = ['team-token-1', 'other token'];
const basic = (token: string) => `Basic ${Buffer.from(`${token}:`).toString('base64')}`;
const AUTH = basic(TOKENS[0]!);
const sha = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');

const hosts = useTestHosts();
let home: TestHome | undefined;
let running: TestHost | undefined;

interface RefreshCall {
  module: string;
  changeType: string;
  filePath: string;
  authorizationKey: string | undefined;
}

/** Test modules with the original's refresh routes: one that counts calls, one that fails, one that hangs. */
function refreshModules(calls: RefreshCall[]): Record<string, AckModuleFactory> {
  const make =
    (id: string, route: string, behaviour: 'ok' | 'fail' | 'hang'): AckModuleFactory =>
    (ctx) => {
      const router = ctx.host.createRouter();
      router.get(route, (req, res) => {
        calls.push({
          module: id,
          changeType: String(req.query.changeType),
          filePath: String(req.query.filePath),
          authorizationKey: req.headers.authorizationkey as string | undefined,
        });
        if (behaviour === 'hang') return; // never answers
        if (behaviour === 'fail') return void res.status(500).json(false);
        res.json(req.headers.authorizationkey === 'ACKDHOSTNAME' || req.headers.authorizationkey === 'caller-key');
      });
      return { routes: [{ mount: `/${id}/api`, handler: router }] };
    };
  return {
    transact: make('transact', '/transaction/refresh', 'ok'),
    dbclient: make('dbclient', '/query/refresh', 'fail'),
    function: make('function', '/execution/refresh', 'hang'),
  };
}

async function start(options: { tokens?: string[]; maxBytes?: number; calls?: RefreshCall[] } = {}): Promise<TestHost> {
  home = hosts.home(
    testAppSettings({
      AppSettings: {
        LoadModules: ['wwwroot', 'transact', 'dbclient', 'function'],
        Security: { MaxContractSyncFileBytes: options.maxBytes ?? 10_485_760 },
      },
    }),
    {
      'modules/wwwroot/module.json': {
        ModuleID: 'wwwroot',
        ModuleConfig: { FileSyncTokens: options.tokens ?? TOKENS, SyncRefreshTimeoutMs: 700 },
      },
      'modules/transact/module.json': {
        ModuleID: 'transact',
        ModuleConfig: { ContractBasePath: ['../contracts/transact-main', '../contracts/other'] },
      },
      'modules/dbclient/module.json': { ModuleID: 'dbclient' },
      'modules/function/module.json': { ModuleID: 'function' },
      'contracts/wwwroot/HDS/page.html': '<p>v1</p>',
    },
  );
  running = await hosts.start(home, { wwwroot: wwwrootModule, ...refreshModules(options.calls ?? []) });
  return running;
}

function form(fields: Record<string, string>, file?: Buffer | string, fileFirst = false): FormData {
  const data = new FormData();
  const addFile = () => file !== undefined && data.append('file', new Blob([file]), 'upload.bin');
  if (fileFirst) addFile();
  for (const [k, v] of Object.entries(fields)) data.append(k, v);
  if (!fileFirst) addFile();
  return data;
}

function upload(
  url: string,
  fields: Record<string, string>,
  file?: Buffer | string,
  headers: Record<string, string> = { Authorization: AUTH },
) {
  return fetch(`${url}/wwwroot/api/sync/upload`, { method: 'POST', body: form(fields, file), headers });
}

const contracts = (...parts: string[]) => path.join(home!.home, 'contracts', ...parts);
const tempFilesUnder = (dir: string): string[] =>
  fs.existsSync(dir)
    ? fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => isTemporaryFileName(path.basename(f)))
    : [];

describe('sync credentials', () => {
  it('answers 401 with WWW-Authenticate and a code for a missing, malformed or wrong token', async () => {
    const { url } = await start();
    const cases: Array<[Record<string, string>, string]> = [
      [{}, 'sync.missing_token'],
      [{ Authorization: 'Bearer abc' }, 'sync.malformed_token'],
      [{ Authorization: 'Basic' }, 'sync.malformed_token'],
      [{ Authorization: basic('wrong') }, 'sync.invalid_token'],
      [{ Authorization: 'Basic ' + Buffer.from(':team-token-1').toString('base64') }, 'sync.malformed_token'],
    ];
    for (const [headers, code] of cases) {
      for (const res of [
        await fetch(`${url}/wwwroot/api/sync/refresh?moduleName=wwwroot&changeType=Changed&filePath=HDS/page.html`, {
          headers,
        }),
        await upload(url, { moduleName: 'wwwroot', changeType: 'Changed', filePath: 'HDS/page.html' }, 'x', headers),
      ]) {
        expect(res.status).toBe(401);
        expect(res.headers.get('www-authenticate')).toBe('Basic realm="ack-sync"');
        expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        expect(await res.json()).toMatchObject({ status: 401, code });
      }
    }
    expect(fs.readFileSync(contracts('wwwroot', 'HDS', 'page.html'), 'utf8')).toBe('<p>v1</p>');
  });

  it('accepts base64("<token>:") as the original clients send it, a trimmed user part, and a raw non-base64 token', async () => {
    const { url } = await start();
    const q = `${url}/wwwroot/api/sync/refresh?moduleName=wwwroot&changeType=Changed&filePath=/HDS/page.html`;
    for (const authorization of [
      AUTH,
      basic(' other token '),
      `basic ${Buffer.from('team-token-1:ignored password').toString('base64')}`,
      'Basic team-token-1',
    ]) {
      const res = await fetch(q, { headers: { Authorization: authorization } });
      expect(res.status, authorization).toBe(200);
    }
  });

  it('accepts the matching token first, in the middle or last of FileSyncTokens', async () => {
    const tokens = ['first-token', 'middle-token', 'last-token'];
    const { url } = await start({ tokens });
    for (const token of tokens) {
      const res = await fetch(
        `${url}/wwwroot/api/sync/refresh?moduleName=wwwroot&changeType=Changed&filePath=HDS/page.html`,
        { headers: { Authorization: basic(token) } },
      );
      expect(res.status, token).toBe(200);
    }
  });

  it('refuses everyone when no tokens are configured', async () => {
    const { url } = await start({ tokens: [] });
    const res = await upload(url, { moduleName: 'wwwroot', changeType: 'Changed', filePath: 'HDS/page.html' }, 'x');
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Basic realm="ack-sync"');
    expect(await res.json()).toMatchObject({ code: 'sync.no_tokens_configured' });
  });
});

describe('sync upload', () => {
  it('creates a new file (and its folders), changes it, then deletes it', async () => {
    const { url } = await start();
    const target = contracts('wwwroot', 'HDS', 'new', 'deep', 'a.html');
    let res = await upload(
      url,
      { moduleName: 'WWWROOT', changeType: 'created', filePath: '\\HDS\\new\\deep\\a.html' },
      'first',
    );
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      module: 'wwwroot',
      path: 'HDS/new/deep/a.html',
      change: 'Created',
      bytes: 5,
      sha256: sha('first'),
      existed: false,
      refresh: { ok: true, via: 'cache' },
    });
    expect(fs.readFileSync(target, 'utf8')).toBe('first');

    res = await upload(
      url,
      { moduleName: 'wwwroot', changeType: 'Changed', filePath: '/HDS/new/deep/a.html' },
      'second!',
    );
    expect(await res.json()).toMatchObject({ change: 'Changed', bytes: 7, sha256: sha('second!'), existed: true });
    expect(fs.readFileSync(target, 'utf8')).toBe('second!');

    res = await upload(url, { moduleName: 'wwwroot', changeType: 'DELETED', filePath: 'HDS/new/deep/a.html' });
    expect(await res.json()).toMatchObject({ change: 'Deleted', existed: true, sha256: null });
    expect(fs.existsSync(target)).toBe(false);
    res = await upload(url, { moduleName: 'wwwroot', changeType: 'Deleted', filePath: 'HDS/new/deep/a.html' });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ existed: false });
    expect(tempFilesUnder(contracts())).toEqual([]);
  });

  it('never deletes a folder', async () => {
    const { url } = await start();
    const res = await upload(url, { moduleName: 'wwwroot', changeType: 'Deleted', filePath: 'HDS' });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'sync.not_a_file' });
    expect(fs.existsSync(contracts('wwwroot', 'HDS', 'page.html'))).toBe(true);
  });

  it('stores every byte value exactly', async () => {
    const { url } = await start();
    const bytes = Buffer.alloc(256 * 64);
    for (let i = 0; i < bytes.length; i++) bytes[i] = i % 256;
    const res = await upload(url, { moduleName: 'wwwroot', changeType: 'Created', filePath: 'HDS/bin/all.bin' }, bytes);
    expect(await res.json()).toMatchObject({ bytes: bytes.length, sha256: sha(bytes) });
    expect(fs.readFileSync(contracts('wwwroot', 'HDS', 'bin', 'all.bin')).equals(bytes)).toBe(true);
  });

  it('takes a file at MaxContractSyncFileBytes and refuses one byte more with 413, keeping the old file', async () => {
    const { url } = await start({ maxBytes: 1024 });
    let res = await upload(
      url,
      { moduleName: 'wwwroot', changeType: 'Changed', filePath: 'HDS/page.html' },
      Buffer.alloc(1024, 0x61),
    );
    expect(res.status).toBe(200);
    expect(fs.statSync(contracts('wwwroot', 'HDS', 'page.html')).size).toBe(1024);
    res = await upload(
      url,
      { moduleName: 'wwwroot', changeType: 'Changed', filePath: 'HDS/page.html' },
      Buffer.alloc(1025, 0x62),
    );
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ code: 'sync.file_too_large' });
    expect(fs.readFileSync(contracts('wwwroot', 'HDS', 'page.html'))).toEqual(Buffer.alloc(1024, 0x61));
    res = await upload(
      url,
      { moduleName: 'wwwroot', changeType: 'Created', filePath: 'HDS/fresh/big.bin' },
      Buffer.alloc(1025),
    );
    expect(res.status).toBe(413);
    expect(fs.existsSync(contracts('wwwroot', 'HDS', 'fresh'))).toBe(false);
    expect(tempFilesUnder(contracts())).toEqual([]);
  });

  it('refuses every path that leaves the module folder with 400 and writes nothing', async () => {
    const { url } = await start();
    const outside = path.join(home!.home, 'outside');
    fs.mkdirSync(outside);
    fs.symlinkSync(outside, contracts('wwwroot', 'HDS', 'link'));
    const forms = [
      '../escape.html',
      'HDS/../../escape.html',
      '..\\escape.html',
      'HDS\\..\\..\\escape.html',
      '..',
      '/../escape.html',
      'C:/escape.html',
      'c:escape.html',
      '\\\\server\\share\\escape.html',
      '//server/share/escape.html',
      'HDS/a\0b.html',
      'HDS/a\u0001b.html',
      'HDS/a\nb.html',
      'HDS/a\u007fb.html',
      'HDS/link/escape.html',
    ];
    for (const filePath of forms) {
      const res = await upload(url, { moduleName: 'wwwroot', changeType: 'Created', filePath }, 'escaped');
      expect(res.status, filePath).toBe(400);
      expect(await res.json()).toMatchObject({ code: 'sync.invalid_path' });
      const del = await upload(url, { moduleName: 'wwwroot', changeType: 'Deleted', filePath });
      expect(del.status, filePath).toBe(400);
    }
    expect(fs.readdirSync(outside)).toEqual([]);
    expect(fs.existsSync(path.join(home!.home, 'escape.html'))).toBe(false);
    expect(fs.existsSync(contracts('escape.html'))).toBe(false);
    expect(tempFilesUnder(home!.home)).toEqual([]);
  });

  it('answers 400 for missing or unknown fields and a missing file, 415 for a body that is not multipart', async () => {
    const { url } = await start();
    const cases: Array<[Record<string, string>, string | undefined, string]> = [
      [{ changeType: 'Created', filePath: 'HDS/x.html' }, 'x', 'sync.missing_field'],
      [{ moduleName: 'nosuch', changeType: 'Created', filePath: 'HDS/x.html' }, 'x', 'sync.invalid_module'],
      [{ moduleName: 'wwwroot', changeType: 'Renamed', filePath: 'HDS/x.html' }, 'x', 'sync.invalid_change_type'],
      [{ moduleName: 'wwwroot', changeType: 'Created' }, 'x', 'sync.missing_field'],
      [{ moduleName: 'wwwroot', changeType: 'Created', filePath: 'HDS/x.html' }, undefined, 'sync.missing_file'],
    ];
    for (const [fields, file, code] of cases) {
      const res = await upload(url, fields, file);
      expect(res.status, code).toBe(400);
      expect(await res.json()).toMatchObject({ code });
    }
    let res = await fetch(`${url}/wwwroot/api/sync/upload`, {
      method: 'POST',
      headers: { Authorization: AUTH, 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(415);
    res = await fetch(`${url}/wwwroot/api/sync/upload`, {
      method: 'POST',
      headers: { Authorization: AUTH, 'Content-Type': 'multipart/form-data; boundary=xyz' },
      body: '--xyz\r\nContent-Disposition: form-data; name="moduleName"\r\n\r\nwwwroot\r\n--xyz\r\nbroken',
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'sync.invalid_form' });
    expect(fs.existsSync(contracts('wwwroot', 'HDS', 'x.html'))).toBe(false);
  });

  it('accepts the file part before the fields (staged aside, then moved beside the target)', async () => {
    const { url } = await start();
    const res = await fetch(`${url}/wwwroot/api/sync/upload`, {
      method: 'POST',
      headers: { Authorization: AUTH },
      body: form({ moduleName: 'wwwroot', changeType: 'Changed', filePath: 'HDS/page.html' }, 'file came first', true),
    });
    expect(res.status).toBe(200);
    expect(fs.readFileSync(contracts('wwwroot', 'HDS', 'page.html'), 'utf8')).toBe('file came first');
  });

  it('leaves the old file and no temporary file when an upload is cut off mid-body', async () => {
    const { url } = await start();
    const boundary = 'cutboundary';
    const head = Buffer.from(
      [
        ['moduleName', 'wwwroot'],
        ['changeType', 'Changed'],
        ['filePath', 'HDS/page.html'],
      ]
        .map(([n, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${n}"\r\n\r\n${v}\r\n`)
        .join('') +
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="page.html"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    );
    const total = head.length + 1_000_000 + 100;
    const socket = net.connect(Number(new URL(url).port), '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    socket.write(
      `POST /wwwroot/api/sync/upload HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${total}\r\n\r\n`,
    );
    socket.write(head);
    socket.write(Buffer.alloc(300_000, 0x7a));
    // The upload streams into a temporary file beside the target: wait until it is there, then cut.
    const dir = contracts('wwwroot', 'HDS');
    await waitFor(() => tempFilesUnder(dir).length === 1);
    socket.destroy();
    await waitFor(() => tempFilesUnder(dir).length === 0);
    expect(fs.readFileSync(path.join(dir, 'page.html'), 'utf8')).toBe('<p>v1</p>');
    expect(fs.readdirSync(dir).sort()).toEqual(['page.html']);
    // The host is still fine.
    const res = await upload(url, { moduleName: 'wwwroot', changeType: 'Changed', filePath: 'HDS/page.html' }, 'after');
    expect(res.status).toBe(200);
  });

  it('ends concurrent uploads to one path with one of the contents, whole', async () => {
    const { url } = await start();
    const contents = Array.from({ length: 8 }, (_, i) => Buffer.alloc(200_000 + i, 0x41 + i));
    const answers = await Promise.all(
      contents.map((c) => upload(url, { moduleName: 'wwwroot', changeType: 'Changed', filePath: 'HDS/page.html' }, c)),
    );
    expect(answers.map((r) => r.status)).toEqual(contents.map(() => 200));
    const stored = fs.readFileSync(contracts('wwwroot', 'HDS', 'page.html'));
    expect(contents.some((c) => c.equals(stored))).toBe(true);
    expect(tempFilesUnder(contracts())).toEqual([]);
  });

  it('serves the new bytes on the next GET after a wwwroot upload', async () => {
    const { url } = await start();
    const first = await fetch(`${url}/view/page.html`);
    expect(first.status).toBe(200);
    expect(await first.text()).toBe('<p>v1</p>');
    await upload(url, { moduleName: 'wwwroot', changeType: 'Changed', filePath: 'HDS/page.html' }, '<p>v2</p>');
    expect(await (await fetch(`${url}/view/page.html`)).text()).toBe('<p>v2</p>');
    // Same size as before: still new bytes.
    await upload(url, { moduleName: 'wwwroot', changeType: 'Changed', filePath: 'HDS/page.html' }, '<p>v3</p>');
    expect(await (await fetch(`${url}/view/page.html`)).text()).toBe('<p>v3</p>');
  });
});

describe('sync refresh of other modules', () => {
  it("writes into the module's first ContractBasePath and calls its refresh route with AuthorizationKey", async () => {
    const calls: RefreshCall[] = [];
    const { url } = await start({ calls });
    let res = await upload(
      url,
      { moduleName: 'transact', changeType: 'Created', filePath: '/HDS/ZZW/TST010.json' },
      '{"a":1}',
    );
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      module: 'transact',
      path: 'HDS/ZZW/TST010.json',
      refresh: { ok: true, via: 'route', status: 200, body: true },
    });
    expect(fs.readFileSync(contracts('transact-main', 'HDS', 'ZZW', 'TST010.json'), 'utf8')).toBe('{"a":1}');
    expect(calls).toEqual([
      { module: 'transact', changeType: 'Created', filePath: 'HDS/ZZW/TST010.json', authorizationKey: 'ACKDHOSTNAME' },
    ]);

    // The caller's AuthorizationKey is forwarded; the refresh answer is relayed.
    res = await fetch(
      `${url}/wwwroot/api/sync/refresh?moduleName=transact&changeType=Changed&filePath=HDS/ZZW/TST010.json`,
      {
        headers: { Authorization: AUTH, AuthorizationKey: 'caller-key' },
      },
    );
    expect(res.status).toBe(200);
    expect(await res.json()).toBe(true);
    expect(calls[1]).toEqual({
      module: 'transact',
      changeType: 'Changed',
      filePath: 'HDS/ZZW/TST010.json',
      authorizationKey: 'caller-key',
    });
  });

  it("calls this host's own address, never the request's Host header", async () => {
    const calls: RefreshCall[] = [];
    const { url } = await start({ calls });
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.get(
        `${url}/wwwroot/api/sync/refresh?moduleName=transact&changeType=Changed&filePath=x.json`,
        {
          headers: { Authorization: AUTH, Host: 'attacker.invalid:9' },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode!);
        },
      );
      req.on('error', reject);
    });
    expect(status).toBe(200);
    expect(calls).toHaveLength(1);
  });

  it('uses <EntryBasePath>/../contracts/<module> without a ContractBasePath, and answers 502 when the module fails', async () => {
    const calls: RefreshCall[] = [];
    const { url } = await start({ calls });
    const res = await upload(url, { moduleName: 'dbclient', changeType: 'Created', filePath: 'HDS/q.xml' }, '<q/>');
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ refresh: { ok: false, status: 500, code: 'sync.refresh_failed' } });
    expect(fs.readFileSync(contracts('dbclient', 'HDS', 'q.xml'), 'utf8')).toBe('<q/>');
    const refresh = await fetch(
      `${url}/wwwroot/api/sync/refresh?moduleName=dbclient&changeType=Changed&filePath=HDS/q.xml`,
      { headers: { Authorization: AUTH } },
    );
    expect(refresh.status).toBe(502);
    expect(await refresh.json()).toMatchObject({ code: 'sync.refresh_failed', upstreamStatus: 500 });
  });

  it('answers 502 when the module does not answer within the time-out', async () => {
    const calls: RefreshCall[] = [];
    const { url } = await start({ calls });
    const refresh = await fetch(
      `${url}/wwwroot/api/sync/refresh?moduleName=function&changeType=Changed&filePath=HDS/f/featureMain.js`,
      { headers: { Authorization: AUTH } },
    );
    expect(refresh.status).toBe(502);
    expect(await refresh.json()).toMatchObject({ code: 'sync.refresh_timeout' });
    expect(calls.map((c) => c.module)).toEqual(['function']);
    const res = await upload(
      url,
      { moduleName: 'function', changeType: 'Changed', filePath: 'HDS/f/featureMain.js' },
      'x',
    );
    expect(await res.json()).toMatchObject({ refresh: { ok: false, code: 'sync.refresh_timeout' } });
  });
});

describe('sync upload paths the file system refuses', () => {
  it('answers 400 for a name too long and 409 when a file stands where the path needs a folder, writing nothing', async () => {
    const { url } = await start();
    const long = await upload(
      url,
      { moduleName: 'wwwroot', changeType: 'Created', filePath: `HDS/${'a'.repeat(300)}.txt` },
      'x',
    );
    expect(long.status).toBe(400);
    expect(await long.json()).toMatchObject({ code: 'request.path_too_long' });
    const through = await upload(
      url,
      { moduleName: 'wwwroot', changeType: 'Created', filePath: 'HDS/page.html/inner.txt' },
      'x',
    );
    expect(through.status).toBe(409);
    const body = await through.json();
    expect(body).toMatchObject({ code: 'request.path_conflict' });
    expect(JSON.stringify(body)).not.toContain(home!.home);
    expect(fs.readFileSync(contracts('wwwroot', 'HDS', 'page.html'), 'utf8')).toBe('<p>v1</p>');
    expect(tempFilesUnder(contracts())).toEqual([]);
  });
});

describe('sync start-up', () => {
  it('removes temporary files an interrupted upload left in the contract folders and the staging folder, and only stale ones', async () => {
    const h = hosts.home(testAppSettings({ AppSettings: { LoadModules: ['wwwroot'] } }), {
      'modules/wwwroot/module.json': { ModuleID: 'wwwroot', ModuleConfig: { FileSyncTokens: TOKENS } },
      'contracts/wwwroot/HDS/page.html': '<p>v1</p>',
      'contracts/wwwroot/HDS/.page.html.a1b2c3d4e5f6.ack-tmp': '<p>half',
      'contracts/wwwroot/HDS/.new.html.0f0f0f0f0f0f.ack-tmp': '<p>in flight',
      '.ack/uploads/.upload.bin.a1b2c3d4e5f6.ack-tmp': 'half an upload whose file came first',
    });
    const stale = path.join(h.home, 'contracts/wwwroot/HDS/.page.html.a1b2c3d4e5f6.ack-tmp');
    const staleStaged = path.join(h.home, '.ack/uploads/.upload.bin.a1b2c3d4e5f6.ack-tmp');
    const hourAgo = new Date(Date.now() - 3_600_000);
    fs.utimesSync(stale, hourAgo, hourAgo);
    fs.utimesSync(staleStaged, hourAgo, hourAgo);
    await hosts.start(h, { wwwroot: wwwrootModule });
    await waitFor(() => !fs.existsSync(stale));
    await waitFor(() => !fs.existsSync(staleStaged));
    expect(fs.existsSync(path.join(h.home, 'contracts/wwwroot/HDS/.new.html.0f0f0f0f0f0f.ack-tmp'))).toBe(true);
    expect(fs.readFileSync(path.join(h.home, 'contracts/wwwroot/HDS/page.html'), 'utf8')).toBe('<p>v1</p>');
  });
});

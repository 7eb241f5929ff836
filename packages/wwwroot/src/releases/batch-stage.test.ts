import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { multipartBody, testAppSettings, useTestHosts, type FormPart, type TestHost } from '@ack/host/test-support';
import { wwwrootModule } from '../index.js';
import { basicAuth } from '../test-support/test-fixture.js';
import { treeSummary } from './tree-digest.js';

// A delta push into a staged release (docs/wire-formats.md "Sync releases"): the sync listing and
// batch with `release=<id>&path=<prefix>` work on the stage, paths relative to the prefix; nothing
// is live until the commit.

const TOKEN = 'stage-token';
const AUTH = { Authorization: basicAuth(TOKEN) };
const hosts = useTestHosts();

async function start(releases = true): Promise<TestHost> {
  const home = hosts.home(testAppSettings({ AppSettings: { LoadModules: ['wwwroot'] } }), {
    'modules/wwwroot/module.json': {
      ModuleID: 'wwwroot',
      ModuleConfig: { FileSyncTokens: [TOKEN], IsEnabledReleases: releases },
    },
    'contracts/wwwroot/HDS/page.html': 'live page',
    'contracts/wwwroot/HDS/gone.js': 'gone',
  });
  return hosts.start(home, { wwwroot: wwwrootModule });
}

const sync = (host: TestHost, route: string, q: Record<string, string>, init: RequestInit = {}) =>
  fetch(`${host.url}/wwwroot/api/sync/${route}?${new URLSearchParams(q)}`, {
    ...init,
    headers: { ...AUTH, ...(init.headers as Record<string, string>) },
  });

async function listed(host: TestHost, q: Record<string, string>): Promise<string[]> {
  const r = await sync(host, 'list', { moduleName: 'wwwroot', ...q });
  expect(r.status).toBe(200);
  const lines = (await r.text()).split('\n').filter(Boolean);
  return lines.slice(0, -1).map((l) => (JSON.parse(l) as { path: string }).path);
}

function batch(host: TestHost, q: Record<string, string>, parts: FormPart[]) {
  const { body, contentType } = multipartBody([{ name: 'moduleName', content: 'wwwroot' }, ...parts]);
  return sync(host, 'batch', q, { method: 'POST', body, headers: { 'Content-Type': contentType } });
}

const file = (filePath: string, content: string): FormPart[] => [
  { name: 'filePath', content: filePath },
  { name: 'file', content, filename: 'f.bin' },
];

const view = (host: TestHost, p: string) =>
  fetch(`${host.url}/view/${p}`).then(async (r) => [r.status, await r.text()]);

describe('a delta push into a staged release', () => {
  it('lists the stage and writes a batch into it; live only after the commit', async () => {
    const host = await start();
    const staged = await sync(host, 'releases/stage', { moduleName: 'wwwroot', path: 'HDS/' }, { method: 'POST' });
    const { id } = (await staged.json()) as { id: string };
    const q = { release: id, path: 'HDS/' };
    // The stage starts as the live release; its paths are relative to the prefix.
    expect(await listed(host, q)).toEqual(['gone.js', 'page.html']);
    // The whole folder lists the live release through its link, never the release store.
    expect(await listed(host, {})).toEqual(['HDS/gone.js', 'HDS/page.html']);

    const pushed = await batch(host, q, [
      ...file('page.html', 'new page'),
      ...file('sub/new.js', 'new'),
      { name: 'deletePath', content: 'gone.js' },
      ...file('../escape.js', 'out'),
    ]);
    expect(pushed.status).toBe(200);
    const { results } = (await pushed.json()) as { results: { path: string; ok: boolean; code?: string }[] };
    expect(results.map((r) => [r.path, r.ok, r.code])).toEqual([
      ['page.html', true, undefined],
      ['sub/new.js', true, undefined],
      ['../escape.js', false, 'sync.invalid_path'],
      ['gone.js', true, undefined],
    ]);
    expect(await listed(host, q)).toEqual(['page.html', 'sub/new.js']);
    // Nothing of it is live yet.
    expect(await view(host, 'page.html')).toEqual([200, 'live page']);
    expect(await view(host, 'gone.js')).toEqual([200, 'gone']);

    const commit = await sync(
      host,
      `releases/stage/${id}/commit`,
      { moduleName: 'wwwroot', path: 'HDS/' },
      {
        method: 'POST',
      },
    );
    expect(commit.status).toBe(200);
    // The files the batch wrote were hashed as written: the commit's digest read none of them, and
    // is still the digest of the content.
    expect(commit.headers.get('server-timing')).toMatch(/^digest;dur=[0-9.]+;desc="0 read", /);
    const manifest = (await commit.json()) as { digest: string; files: number };
    const live = await treeSummary(path.join(host.home.home, 'contracts', 'wwwroot', 'HDS'));
    expect([manifest.digest, manifest.files]).toEqual([live.digest, 2]);
    expect(await view(host, 'page.html')).toEqual([200, 'new page']);
    expect(await view(host, 'sub/new.js')).toEqual([200, 'new']);
    // The same batch without `release` still writes the live files, as before.
    expect((await batch(host, {}, file('HDS/page.html', 'direct'))).status).toBe(200);
    expect(await view(host, 'page.html')).toEqual([200, 'direct']);
  });

  it('refuses an unknown, a bad or a committed release id, and any release where releases are off', async () => {
    const host = await start();
    const staged = await sync(host, 'releases/stage', { moduleName: 'wwwroot', path: 'HDS/' }, { method: 'POST' });
    const { id } = (await staged.json()) as { id: string };
    const problem = async (r: Response) => [r.status, ((await r.json()) as { code: string }).code];
    expect(await problem(await batch(host, { release: 'nope', path: 'HDS/' }, file('a.js', 'a')))).toEqual([
      404,
      'release.not_staged',
    ]);
    expect(await problem(await batch(host, { release: '../x', path: 'HDS/' }, file('a.js', 'a')))).toEqual([
      400,
      'release.bad_id',
    ]);
    expect(await problem(await sync(host, 'list', { moduleName: 'wwwroot', release: id, path: '../' }))).toEqual([
      400,
      'release.bad_prefix',
    ]);
    expect(
      await problem(await sync(host, 'list', { moduleName: 'wwwroot', release: id.slice(0, -1), path: 'HDS/' })),
    ).toEqual([404, 'release.not_staged']);
    // The neighbour that passes: the exact id.
    expect((await batch(host, { release: id, path: 'HDS/' }, file('a.js', 'a'))).status).toBe(200);
    await sync(host, `releases/stage/${id}/commit`, { moduleName: 'wwwroot', path: 'HDS/' }, { method: 'POST' });
    expect(await problem(await batch(host, { release: id, path: 'HDS/' }, file('a.js', 'a')))).toEqual([
      404,
      'release.not_staged',
    ]);

    const off = await start(false);
    expect(await problem(await sync(off, 'list', { moduleName: 'wwwroot', release: id, path: 'HDS/' }))).toEqual([
      404,
      'release.not_staged',
    ]);
  });
});

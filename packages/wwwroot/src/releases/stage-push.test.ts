import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import {
  multipartBody,
  testAppSettings,
  useTestHosts,
  waitFor,
  type FormPart,
  type TestHost,
} from '@ack/host/test-support';
import { wwwrootModule } from '../index.js';

// The sync upload, its PUT form and the batch write into a release being staged when the query
// names it (`release`, `releasePath`: docs/releases.md "Pushing into a stage"): nothing is live
// until the switch, every path must lie under the release's prefix, and the module is refreshed
// at the switch rather than once per file.

const TOKEN = 'stage-push-token';
const AUTH = `Basic ${Buffer.from(`${TOKEN}:`).toString('base64')}`;
const hosts = useTestHosts();

async function start(): Promise<TestHost & { contracts: string }> {
  const home = hosts.home(testAppSettings({ AppSettings: { LoadModules: ['wwwroot'] } }), {
    'modules/wwwroot/module.json': {
      ModuleID: 'wwwroot',
      ModuleConfig: { FileSyncTokens: [TOKEN], IsEnabledReleases: true },
    },
    'contracts/wwwroot/HDS/page.html': '<p>v1</p>',
    'contracts/wwwroot/HDS/old.html': 'old',
  });
  const running = await hosts.start(home, { wwwroot: wwwrootModule });
  return { ...running, contracts: path.join(home.home, 'contracts', 'wwwroot') };
}

const sync = (host: TestHost, route: string, query: Record<string, string>, init: RequestInit = {}) =>
  fetch(`${host.url}/wwwroot/api/sync${route}?${new URLSearchParams(query)}`, {
    ...init,
    headers: { Authorization: AUTH, ...(init.headers as Record<string, string>) },
  });
const view = async (host: TestHost, name: string) => {
  const res = await fetch(`${host.url}/view/${name}`);
  return `${res.status} ${await res.text()}`;
};

async function stage(host: TestHost): Promise<string> {
  const res = await sync(host, '/releases/stage', { moduleName: 'wwwroot', path: 'HDS/' }, { method: 'POST' });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

function batch(parts: FormPart[]): RequestInit {
  const { body, contentType } = multipartBody([{ name: 'moduleName', content: 'wwwroot' }, ...parts]);
  return { method: 'POST', body, headers: { 'Content-Type': contentType } };
}

describe('pushing into a release being staged', () => {
  it('a batch stages files and deletions, none live before the switch, all at it', async () => {
    const host = await start();
    const id = await stage(host);
    const answer = await sync(
      host,
      '/batch',
      { release: id, releasePath: 'HDS/' },
      batch([
        { name: 'filePath', content: 'HDS/page.html' },
        { name: 'file', filename: 'page.html', content: '<p>v2</p>' },
        { name: 'filePath', content: 'HDS/new/deep.html' },
        { name: 'file', filename: 'deep.html', content: 'deep' },
        // Outside the prefix: the neighbour that shares its letters, and a way out.
        { name: 'filePath', content: 'HDSX/a.html' },
        { name: 'file', filename: 'a.html', content: 'a' },
        { name: 'filePath', content: 'HDS/../x.html' },
        { name: 'file', filename: 'x.html', content: 'x' },
        { name: 'deletePath', content: 'HDS/old.html' },
      ]),
    );
    expect(answer.status).toBe(200);
    const { results } = (await answer.json()) as {
      results: { path: string; ok: boolean; code?: string; refresh?: unknown }[];
    };
    expect(results.map((r) => [r.path, r.ok, r.code])).toEqual([
      ['HDS/page.html', true, undefined],
      ['HDS/new/deep.html', true, undefined],
      ['HDSX/a.html', false, 'sync.invalid_path'],
      ['HDS/../x.html', false, 'sync.invalid_path'],
      ['HDS/old.html', true, undefined],
    ]);
    // Refreshed at the switch, not file by file.
    expect(results.every((r) => r.refresh === undefined)).toBe(true);
    expect(fs.existsSync(path.join(host.contracts, 'HDSX'))).toBe(false);
    // Nothing live yet.
    expect(await view(host, 'page.html')).toBe('200 <p>v1</p>');
    expect(await view(host, 'old.html')).toBe('200 old');
    expect((await view(host, 'new/deep.html')).slice(0, 3)).toBe('404');

    const commit = await sync(
      host,
      `/releases/stage/${id}/commit`,
      { moduleName: 'wwwroot', path: 'HDS/' },
      { method: 'POST' },
    );
    expect(commit.status).toBe(200);
    expect(await view(host, 'page.html')).toBe('200 <p>v2</p>');
    expect(await view(host, 'new/deep.html')).toBe('200 deep');
    expect((await view(host, 'old.html')).slice(0, 3)).toBe('404');
  });

  it('the one-file upload and its PUT form stage too; a release not being staged is a 404 problem', async () => {
    const host = await start();
    const id = await stage(host);
    const q = { release: id, releasePath: 'HDS/' };
    const { body, contentType } = multipartBody([
      { name: 'moduleName', content: 'wwwroot' },
      { name: 'changeType', content: 'Changed' },
      { name: 'filePath', content: 'HDS/page.html' },
      { name: 'file', filename: 'page.html', content: '<p>posted</p>' },
    ]);
    const posted = await sync(host, '/upload', q, { method: 'POST', body, headers: { 'Content-Type': contentType } });
    expect(posted.status).toBe(200);
    expect(await posted.json()).toMatchObject({ path: 'HDS/page.html', refresh: { ok: true, via: 'none' } });
    const put = await sync(
      host,
      '/upload',
      { ...q, moduleName: 'wwwroot', changeType: 'Created', filePath: 'HDS/put.html' },
      { method: 'PUT', body: 'put' },
    );
    expect(put.status).toBe(200);
    expect(await view(host, 'page.html')).toBe('200 <p>v1</p>');
    expect((await view(host, 'put.html')).slice(0, 3)).toBe('404');

    for (const [query, status, code] of [
      [{ release: 'r-none', releasePath: 'HDS/' }, 404, 'release.not_staged'],
      [{ release: id, releasePath: 'HDSX/' }, 404, 'release.not_staged'],
      [{ release: `${id}/..`, releasePath: 'HDS/' }, 400, 'release.bad_id'],
      [{ release: id }, 400, 'release.bad_prefix'],
    ] as const) {
      const refused = await sync(
        host,
        '/upload',
        { ...query, moduleName: 'wwwroot', changeType: 'Created', filePath: 'HDS/x.html' },
        { method: 'PUT', body: 'x' },
      );
      expect(refused.status, JSON.stringify(query)).toBe(status);
      expect(await refused.json()).toMatchObject({ code });
    }

    await sync(host, `/releases/stage/${id}/commit`, { moduleName: 'wwwroot', path: 'HDS/' }, { method: 'POST' });
    expect(await view(host, 'page.html')).toBe('200 <p>posted</p>');
    expect(await view(host, 'put.html')).toBe('200 put');
    expect(await view(host, 'old.html')).toBe('200 old');
  });
});

describe('a switch, as the module and live reload hear it', () => {
  it('is one announcement naming the files it created, replaced and removed, not the ones it kept', async () => {
    const home = hosts.home(testAppSettings({ AppSettings: { LoadModules: ['wwwroot'] } }), {
      'modules/wwwroot/module.json': {
        ModuleID: 'wwwroot',
        ModuleConfig: { FileSyncTokens: [TOKEN], IsEnabledReleases: true, IsEnabledLiveReload: true },
      },
      'contracts/wwwroot/HDS/page.html': '<p>v1</p>',
      'contracts/wwwroot/HDS/old.html': 'old',
      'contracts/wwwroot/HDS/same.html': 'same',
    });
    const host = await hosts.start(home, { wwwroot: wwwrootModule });
    const socket = new WebSocket(`${host.url.replace(/^http/, 'ws')}/wwwroot/api/live-reload`);
    const messages: string[][] = [];
    socket.on('message', (data: Buffer) => messages.push((JSON.parse(data.toString()) as { paths: string[] }).paths));
    await once(socket, 'open');
    try {
      const id = await stage(host);
      const pushed = await sync(
        host,
        '/batch',
        { release: id, releasePath: 'HDS/' },
        batch([
          { name: 'filePath', content: 'HDS/page.html' },
          { name: 'file', filename: 'page.html', content: '<p>v2</p>' },
          { name: 'filePath', content: 'HDS/new.html' },
          { name: 'file', filename: 'new.html', content: 'new' },
          { name: 'deletePath', content: 'HDS/old.html' },
        ]),
      );
      expect(pushed.status).toBe(200);
      const commit = await sync(
        host,
        `/releases/stage/${id}/commit`,
        { moduleName: 'wwwroot', path: 'HDS/' },
        { method: 'POST' },
      );
      expect(await commit.json()).toMatchObject({ id, changedFiles: 3, refresh: { ok: true } });
      await waitFor(() => messages.length > 0, { message: 'the switch announced' });
      // Whatever the file watcher adds comes within its 100 ms gathering: wait past it.
      await new Promise((resolve) => setTimeout(resolve, 600));
      expect(messages).toEqual([['/view/new.html', '/view/old.html', '/view/page.html']]);
    } finally {
      socket.close();
    }
  });
});

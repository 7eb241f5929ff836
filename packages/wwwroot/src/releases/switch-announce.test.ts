import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { testAppSettings, useTestHosts, type TestHost } from '@ack/host/test-support';
import { wwwrootModule } from '../index.js';
import { LIVE_RELOAD_PATH } from '../live-reload/index.js';

// A switch and a rollback are one change (docs/releases.md "Refresh and live reload"): live reload
// hears one message naming the files the releases differ in, not one per file, and nothing for a
// file both releases share.

const TOKEN = 'release-token';
const AUTH = `Basic ${Buffer.from(`${TOKEN}:`).toString('base64')}`;
const hosts = useTestHosts();

async function start(): Promise<TestHost> {
  const home = hosts.home(testAppSettings({ AppSettings: { LoadModules: ['wwwroot'], RunningEnvironment: 'D' } }), {
    'modules/wwwroot/module.json': {
      ModuleID: 'wwwroot',
      ModuleConfig: { FileSyncTokens: [TOKEN], IsEnabledReleases: true, IsEnabledLiveReload: true },
    },
    'contracts/wwwroot/HDS/same.html': 'same',
    'contracts/wwwroot/HDS/old.js': 'old',
  });
  return hosts.start(home, { wwwroot: wwwrootModule });
}

const api = (host: TestHost, route: string, q: Record<string, string>, init: RequestInit = {}) =>
  fetch(`${host.url}/wwwroot/api/sync/releases${route}?${new URLSearchParams({ moduleName: 'wwwroot', ...q })}`, {
    ...init,
    headers: { Authorization: AUTH },
  });

async function listen(url: string) {
  const socket = new WebSocket(url.replace(/^http/, 'ws') + LIVE_RELOAD_PATH);
  await once(socket, 'open');
  const messages: string[][] = [];
  socket.on('message', (data) => messages.push((JSON.parse(data.toString()) as { paths: string[] }).paths));
  return { socket, messages };
}

/** Until no message has come for 400 ms (at most 5 s). */
async function quiet(messages: readonly unknown[]): Promise<void> {
  const deadline = Date.now() + 5_000;
  let count = -1;
  while (count !== messages.length && Date.now() < deadline) {
    count = messages.length;
    await new Promise((resolve) => setTimeout(resolve, 400));
  }
}

describe('a release switch is announced once', () => {
  it('tells live reload once per commit and once per rollback, with the changed files only', async () => {
    const host = await start();
    // The first release adopts the folder: stage it empty of changes, then a real one.
    const adopt = (await (await api(host, '/stage', { path: 'HDS/' }, { method: 'POST' })).json()) as { id: string };
    expect((await api(host, `/stage/${adopt.id}/commit`, { path: 'HDS/' }, { method: 'POST' })).status).toBe(200);
    const { socket, messages } = await listen(host.url);
    await quiet(messages);
    messages.length = 0;

    const { id } = (await (await api(host, '/stage', { path: 'HDS/' }, { method: 'POST' })).json()) as { id: string };
    for (const [filePath, body] of [
      ['a.js', 'a'],
      ['b.css', 'b'],
      ['sub/c.html', 'c'],
    ]) {
      await api(host, `/stage/${id}/file`, { path: 'HDS/', filePath: filePath! }, { method: 'PUT', body: body! });
    }
    await api(host, `/stage/${id}/file`, { path: 'HDS/', filePath: 'old.js' }, { method: 'DELETE' });
    // Staging is not announced.
    await quiet(messages);
    expect(messages).toEqual([]);

    expect((await api(host, `/stage/${id}/commit`, { path: 'HDS/' }, { method: 'POST' })).status).toBe(200);
    await quiet(messages);
    expect(messages.map((m) => [...m].sort())).toEqual([
      ['/view/a.js', '/view/b.css', '/view/old.js', '/view/sub/c.html'],
    ]);

    messages.length = 0;
    expect((await api(host, '/rollback', { path: 'HDS/' }, { method: 'POST' })).status).toBe(200);
    await quiet(messages);
    expect(messages.map((m) => [...m].sort())).toEqual([
      ['/view/a.js', '/view/b.css', '/view/old.js', '/view/sub/c.html'],
    ]);

    // A rollback to the release already live tells nothing.
    messages.length = 0;
    expect((await api(host, '/rollback', { path: 'HDS/', to: adopt.id }, { method: 'POST' })).status).toBe(200);
    await quiet(messages);
    expect(messages).toEqual([]);
    socket.close();
  });
});

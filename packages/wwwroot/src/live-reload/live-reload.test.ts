import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { testAppSettings, useTestHosts } from '@ack/host/test-support';
import { wwwrootModule } from '../index.js';
import { createServedPathMap } from './served-paths.js';
import { LIVE_RELOAD_PATH } from './index.js';

const hosts = useTestHosts();
const TOKEN = 'live-token';
const HOST_ACCESS_ID = 'live-reload-host-access';

async function start(appSettings: Record<string, unknown> = {}, moduleConfig: Record<string, unknown> = {}) {
  const home = hosts.home(
    testAppSettings({
      AppSettings: { LoadModules: ['wwwroot'], UseContractSync: true, HostAccessID: HOST_ACCESS_ID, ...appSettings },
    }),
    {
      'modules/wwwroot/module.json': {
        ModuleID: 'wwwroot',
        ModuleConfig: { FileSyncTokens: [TOKEN], SharedFileConfigPath: '../config/shared.json', ...moduleConfig },
      },
      'config/shared.json': { items: [{ requestPath: '/shared/theme.css', hostFilePath: '../shared/theme.css' }] },
      'shared/theme.css': 'body{}',
      'modules/wwwroot/wwwroot/site.css': 'body{}',
      'contracts/wwwroot/HDS/screen.html': '<p>v1</p>',
    },
  );
  return hosts.start(home, { wwwroot: wwwrootModule });
}

/** A live-reload client that collects the paths announced to it (all, and message by message). */
async function listen(url: string) {
  const socket = new WebSocket(url.replace(/^http/, 'ws') + LIVE_RELOAD_PATH);
  await once(socket, 'open');
  const seen: string[] = [];
  const messages: string[][] = [];
  socket.on('message', (data) => {
    const message = JSON.parse(data.toString()) as { type: string; paths: string[] };
    expect(message.type).toBe('changed');
    seen.push(...message.paths);
    messages.push(message.paths);
  });
  return { socket, seen, messages };
}

/**
 * Waits until no message has come for 400 ms (bounded: at most 5 s): what the watcher saw of
 * earlier writes has been announced or dropped by then.
 */
async function waitForQuiet(messages: readonly unknown[]): Promise<void> {
  const deadline = Date.now() + 5_000;
  let count = -1;
  while (count !== messages.length && Date.now() < deadline) {
    count = messages.length;
    await new Promise((resolve) => setTimeout(resolve, 400));
  }
}

describe('live reload', () => {
  it('announces a sync upload, a contract sync and edits on disk with the URL paths that serve them', async () => {
    const { url, home } = await start();
    const manifest = await fetch(`${url}/shared-files/manifest`);
    expect(manifest.headers.get('ack-live-reload')).toBe(LIVE_RELOAD_PATH);
    const { socket, seen } = await listen(url);

    const upload = new FormData();
    upload.append('moduleName', 'wwwroot');
    upload.append('changeType', 'Changed');
    upload.append('filePath', 'HDS/screen.css');
    upload.append('file', new Blob(['p{color:red}']), 'screen.css');
    const uploaded = await fetch(`${url}/wwwroot/api/sync/upload`, {
      method: 'POST',
      body: upload,
      headers: { authorization: `Basic ${Buffer.from(`${TOKEN}:`).toString('base64')}` },
    });
    expect(uploaded.status).toBe(200);
    await expect.poll(() => seen).toContain('/view/screen.css');

    const synced = new FormData();
    synced.append('moduleID', 'wwwroot');
    synced.append('contractType', 'wwwroot');
    synced.append('changeType', 'Created');
    synced.append('destFilePath', 'app/page.html');
    synced.append('file', new Blob(['<p>synced</p>']), 'page.html');
    const contract = await fetch(`${url}/contractsync`, {
      method: 'POST',
      body: synced,
      headers: { hostAccessID: HOST_ACCESS_ID },
    });
    expect(contract.status).toBe(200);
    await expect.poll(() => seen).toContain('/wwwroot/app/page.html');

    // Edits on disk: the watcher may take a moment to arm, so an edit is repeated (bounded) until seen.
    for (const [file, served] of [
      ['modules/wwwroot/wwwroot/site.css', '/site.css'],
      ['contracts/wwwroot/HDS/screen.html', '/view/screen.html'],
      ['shared/theme.css', '/shared/theme.css'],
    ] as const) {
      await expect
        .poll(
          () => {
            home.write(file, `/* ${Date.now()} */`);
            return seen;
          },
          { timeout: 10_000, interval: 500 },
        )
        .toContain(served);
    }
    socket.close();
  });

  it('announces a sync upload before answering it, in a message of its own, and not again when the disk watcher sees the same write', async () => {
    const { url, home } = await start();
    const { socket, messages } = await listen(url);
    // The disk watchers are armed once a disk edit is heard (bounded, repeated until seen).
    await expect
      .poll(
        () => {
          home.write('modules/wwwroot/wwwroot/site.css', `/* ${Date.now()} */`);
          return messages.flat();
        },
        { timeout: 10_000, interval: 500 },
      )
      .toContain('/site.css');
    await waitForQuiet(messages);

    const before = messages.length;
    const upload = new FormData();
    upload.append('moduleName', 'wwwroot');
    upload.append('changeType', 'Changed');
    upload.append('filePath', 'HDS/screen.css');
    upload.append('file', new Blob(['p{color:blue}']), 'screen.css');
    const uploaded = await fetch(`${url}/wwwroot/api/sync/upload`, {
      method: 'POST',
      body: upload,
      headers: { authorization: `Basic ${Buffer.from(`${TOKEN}:`).toString('base64')}` },
    });
    expect(uploaded.status).toBe(200);
    await uploaded.text();
    // The announcement was written to its socket before the answer to the upload: one turn of the
    // event loop later it has been read (gathered with disk edits, it would come 100 ms later).
    await new Promise(setImmediate);
    expect(messages.slice(before)).toEqual([['/view/screen.css']]);
    // The watcher's event of that same write is not a second announcement.
    await waitForQuiet(messages);
    expect(messages.slice(before)).toEqual([['/view/screen.css']]);
    socket.close();
  });

  it('announces only paths the host serves: never a dotfile, a symlink out of the root, or a name the contract prefix owns', async () => {
    const { url, home } = await start();
    const root = path.join(home.home, 'modules/wwwroot/wwwroot');
    const never = {
      'modules/wwwroot/wwwroot/.env': '/.env',
      'modules/wwwroot/wwwroot/sub/.hidden/x.css': '/sub/.hidden/x.css',
      'modules/wwwroot/wwwroot/.well-known/.secret': '/.well-known/.secret',
      'modules/wwwroot/wwwroot/view/in-static-root.css': '/view/in-static-root.css',
      // Written through the symlink's target: the watcher reports the link's name.
      'outside/secret.css': '/link-out.css',
    };
    // The nearest neighbours, each served: a plain file, a symlink that stays inside, .well-known.
    const served = {
      'modules/wwwroot/wwwroot/.well-known/security.txt': '/.well-known/security.txt',
      'modules/wwwroot/wwwroot/site.css': '/site.css',
    };
    for (const file of [...Object.keys(never), ...Object.keys(served)]) home.write(file, 'v0');
    fs.symlinkSync(path.join(home.home, 'outside/secret.css'), path.join(root, 'link-out.css'));
    fs.symlinkSync('site.css', path.join(root, 'alias.css'));
    const { socket, seen, messages } = await listen(url);

    // Each round writes the refused files first, then the served ones: once a round's last write is
    // announced, the round's earlier writes were handled before it.
    let round = 0;
    const writeRound = () => {
      round++;
      for (const file of [...Object.keys(never), ...Object.keys(served)]) home.write(file, `v${round}`);
    };
    // The watcher may take a moment to arm, so a round is repeated (bounded) until seen.
    await expect
      .poll(
        () => {
          writeRound();
          return seen;
        },
        { timeout: 10_000, interval: 500 },
      )
      .toContain('/site.css');
    const armed = messages.length;
    writeRound();
    await expect.poll(() => messages.slice(armed).flat(), { timeout: 10_000 }).toContain('/site.css');

    for (const path of Object.values(served)) expect(seen).toContain(path);
    expect(seen).toContain('/alias.css');
    for (const path of Object.values(never)) expect(seen).not.toContain(path);
    socket.close();
  });

  it('is off in production even when IsEnabledLiveReload asks for it, and can be turned off in development', async () => {
    for (const [appSettings, moduleConfig] of [
      [{ RunningEnvironment: 'P' }, { IsEnabledLiveReload: true }],
      [{ RunningEnvironment: 'D' }, { IsEnabledLiveReload: false }],
    ] as const) {
      const { url } = await start(appSettings, moduleConfig);
      const manifest = await fetch(`${url}/shared-files/manifest`);
      expect(manifest.status).toBe(200);
      expect(manifest.headers.get('ack-live-reload')).toBeNull();
      const socket = new WebSocket(url.replace(/^http/, 'ws') + LIVE_RELOAD_PATH);
      socket.on('error', () => {});
      const [, res] = (await once(socket, 'unexpected-response')) as [unknown, { statusCode: number }];
      expect(res.statusCode).toBe(404);
      socket.terminate();
    }
  });

  it('can be turned on outside development (RunningEnvironment S) by IsEnabledLiveReload', async () => {
    const { url } = await start({ RunningEnvironment: 'S' }, { IsEnabledLiveReload: true });
    const { socket } = await listen(url);
    expect(socket.readyState).toBe(WebSocket.OPEN);
    socket.close();
  });
});

describe('served paths', () => {
  const root = path.resolve('/srv/home');
  const map = createServedPathMap(
    [
      { root: path.join(root, 'contracts/wwwroot/HDS'), prefix: '/view/' },
      { root: path.join(root, 'modules/wwwroot/wwwroot'), prefix: '/' },
    ],
    [{ requestPath: '/shared/a b.css', hostFilePath: path.join(root, 'shared/a b.css') }],
  );

  it('maps a file to each URL that serves it, percent-encoded, and a temporary file to none', () => {
    expect(map(path.join(root, 'contracts/wwwroot/HDS/app/main.css'))).toEqual(['/view/app/main.css']);
    expect(map(path.join(root, 'modules/wwwroot/wwwroot/index.html'))).toEqual(['/index.html']);
    expect(map(path.join(root, 'shared/a b.css'))).toEqual(['/shared/a%20b.css']);
    expect(map(path.join(root, 'contracts/transact/x.json'))).toEqual([]);
    expect(map(path.join(root, 'modules/wwwroot/wwwroot'))).toEqual([]);
  });

  it('names only URLs the lookup rules let through, as the file is named on disk', () => {
    const www = (name: string) => map(path.join(root, 'modules/wwwroot/wwwroot', name));
    expect(www('.env')).toEqual([]);
    expect(www('css/.hidden/a.css')).toEqual([]);
    expect(www('.well-known/.secret')).toEqual([]);
    expect(www('.well-known/security.txt')).toEqual(['/.well-known/security.txt']);
    expect(map(path.join(root, 'contracts/wwwroot/HDS/.well-known/x.txt'))).toEqual([]);
    // The contract prefix is owned by the contract folder, in any case.
    expect(www('view/a.css')).toEqual([]);
    expect(www('VIEW/a.css')).toEqual([]);
    expect(www('viewer/a.css')).toEqual(['/viewer/a.css']);
    expect(www('C:/a.css')).toEqual([]);
    expect(www('a\\b.css')).toEqual([]);
    // `?` and `#` in a name are part of the path.
    expect(www('a?b#c d.css')).toEqual(['/a%3Fb%23c%20d.css']);
  });
});

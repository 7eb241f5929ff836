import crypto from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import tls from 'node:tls';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WebSocket } from 'ws';
import { devCertificateFiles } from '@ack/host/cluster';
import {
  https1Client,
  makeTestCertificate,
  nodeHttp2Client,
  useTestHosts,
  type TestHome,
} from '@ack/host/test-support';
import { runAck, startAckServe, type ServingAck } from '../test-support/spawn-ack.js';
import { runHttp2Load, runLoad } from '../test-support/load.js';

// `ack serve --workers N` (docs/scale-out.md), run as a user would: the built binary.
const hosts = useTestHosts();
const TOKEN = 'workers-sync-token';
const running: ServingAck[] = [];
afterEach(async () => {
  for (const s of running.splice(0)) {
    if (s.child.exitCode === null && s.child.signalCode === null) {
      s.child.kill('SIGTERM');
      await s.exited;
    }
  }
});

function home(appSettings: Record<string, unknown> = {}): TestHome {
  return hosts.home(
    {
      AppSettings: { LoadModules: ['wwwroot'], ...appSettings },
      Serilog: { MinimumLevel: 'Debug', WriteTo: [{ Name: 'Console', Args: {} }] },
    },
    {
      'modules/wwwroot/module.json': { ModuleID: 'wwwroot', ModuleConfig: { FileSyncTokens: [TOKEN] } },
      'modules/wwwroot/wwwroot/hello.txt': 'hello',
      'contracts/wwwroot/HDS/page.html': '<p>old</p>',
    },
  );
}

async function serveWorkers(h: TestHome, workers = 2, extra: string[] = []): Promise<ServingAck> {
  const served = await startAckServe([
    '--app-dir',
    h.appDir,
    '--port',
    '0',
    '--host',
    '127.0.0.1',
    '--workers',
    String(workers),
    ...extra,
  ]);
  running.push(served);
  await waitForOutput(served, new RegExp(`(listening on .*[\\s\\S]*){${workers}}`));
  // The primary's own line for each worker comes after that worker's "listening on" line: a worker
  // counts as started only once every listener is open.
  await waitForOutput(served, new RegExp(`(primary \\d+: worker \\d+ listening[\\s\\S]*){${workers}}`));
  return served;
}

async function waitForOutput(served: ServingAck, pattern: RegExp, timeout = 60_000): Promise<RegExpMatchArray> {
  let match: RegExpMatchArray | null = null;
  await vi.waitFor(
    () => {
      match = served.output().match(pattern);
      expect(match, `waiting for ${pattern} in:\n${served.output().slice(-2000)}`).not.toBeNull();
    },
    { timeout, interval: 100 },
  );
  return match!;
}

/** Resolves as soon as the output matches: on the output event itself, not at a polling interval. */
function outputEvent(served: ServingAck, pattern: RegExp): Promise<void> {
  return new Promise((resolve) => {
    const check = () => {
      if (!pattern.test(served.output())) return;
      served.child.stdout!.off('data', check);
      served.child.stderr!.off('data', check);
      resolve();
    };
    served.child.stdout!.on('data', check);
    served.child.stderr!.on('data', check);
    check();
  });
}

/** The worker processes of a primary, read from the process table (Linux). */
function workersOf(primary: number): Set<number> {
  const children = new Set<number>();
  for (const task of fs.readdirSync(`/proc/${primary}/task`)) {
    const text = fs.readFileSync(`/proc/${primary}/task/${task}/children`, 'utf8').trim();
    for (const pid of text.split(/\s+/)) if (pid !== '') children.add(Number(pid));
  }
  return children;
}

/** A home with dev sign-in and a module that answers who the request is signed in as, and on which worker. */
function signInHome(): TestHome {
  const h = home({
    RunningEnvironment: 'D',
    IsEnabledDevAutoSignIn: true,
    LoadModules: ['wwwroot', 'whoami'],
    SessionState: { IsSession: false },
  });
  h.write('modules/wwwroot/module.json', {
    ModuleID: 'wwwroot',
    ModuleConfig: { FileSyncTokens: [TOKEN], DevAutoSignIn: { UserID: 'leaver' } },
  });
  h.write('modules/whoami/module.json', { ModuleID: 'whoami', EntryPoint: './index.mjs' });
  h.write(
    'modules/whoami/index.mjs',
    `export default (ctx) => {
  const router = ctx.host.createRouter();
  router.get('/', (req, res) => res.json({ pid: process.pid, user: req.ackUser?.UserID ?? null }));
  // A sign-out that says which worker made it.
  router.post('/sign-out', async (req, res) => {
    await ctx.host.signIn.clear(req, res);
    res.json({ pid: process.pid });
  });
  return { routes: [{ mount: '/whoami/api', handler: router }] };
};`,
  );
  return h;
}

// Each test starts worker processes (the built binary) and waits up to 60 s for them: on a busy
// 2-core machine that alone can pass vitest's default 30 s.
describe('ack serve --workers', { timeout: 120_000 }, () => {
  it('serves 20,000 requests at 32 connections through a rolling restart (ack reload) with none failed', async () => {
    const h = home();
    const served = await serveWorkers(h);
    const before = served.output().length;
    let reloadAsked: Promise<unknown> | undefined;
    const load = runLoad(`${served.url}/hello.txt`, 20_000, 32, (done) => {
      if (done === 2_000) reloadAsked = runAck(['reload', '--app-dir', h.appDir]);
    });
    // The restart must happen while the load runs: wait for it before the load may end.
    const result = await load;
    expect(reloadAsked).toBeDefined();
    const reload = (await reloadAsked) as { code: number; stdout: string };
    expect(reload.code).toBe(0);
    const done = await waitForOutput(served, /rolling restart done; workers (\d+), (\d+)/);
    // ack reload waited for the restart and says what it came to: the workers it replaced.
    expect(reload.stdout).toMatch(
      new RegExp(
        `^rolling restart done: 2 worker\\(s\\) replaced \\(\\d+ -> ${done[1]}, \\d+ -> ${done[2]}\\); workers ${done[1]}, ${done[2]}\n$`,
      ),
    );
    expect(result.failures).toEqual([]);
    expect(result.failed).toBe(0);
    expect(result.ok).toBe(20_000);
    expect(served.output().indexOf('rolling restart (SIGHUP)', before)).toBeGreaterThan(-1);
    // Both workers were replaced, each after its successor listened.
    expect(served.output().slice(0, before)).not.toMatch(/stop asked by the primary/);
    expect(
      served
        .output()
        .slice(before)
        .match(/stop asked by the primary: stopping/g),
    ).toHaveLength(2);
    expect(Number(done[1])).not.toBe(Number(done[2]));
    console.log(
      `rolling restart under load: ${result.ok} ok, ${result.failed} failed, ${result.retriedOnReusedSocket} resent after a kept-alive connection closed`,
    );
  });

  it('replaces a worker killed with SIGKILL and keeps serving', async () => {
    const h = home();
    const served = await serveWorkers(h);
    const pids = [...served.output().matchAll(/primary \d+: worker (\d+) listening/g)].map((m) => Number(m[1]));
    expect(pids).toHaveLength(2);
    const load = runLoad(`${served.url}/hello.txt`, 4_000, 32, (done) => {
      if (done === 500) process.kill(pids[0]!, 'SIGKILL');
    });
    const result = await load;
    const replaced = await waitForOutput(served, new RegExp(`worker (\\d+) replaces ${pids[0]}`));
    expect(Number(replaced[1])).not.toBe(pids[0]);
    expect(result.ok).toBeGreaterThan(3_000);
    const after = await runLoad(`${served.url}/hello.txt`, 200, 8);
    expect(after.failed).toBe(0);
  });

  it('keeps exactly --workers N when a worker is killed during a rolling restart', async () => {
    const h = home();
    const served = await serveWorkers(h);
    const primary = served.child.pid!;
    const pids = [...served.output().matchAll(/primary \d+: worker (\d+) listening/g)].map((m) => Number(m[1]));
    expect(workersOf(primary)).toEqual(new Set(pids));
    const before = served.output().length;
    // The first worker is the first the restart replaces: it dies while its successor starts.
    const restarting = outputEvent(served, /rolling restart \(SIGHUP\)/);
    process.kill(primary, 'SIGHUP');
    await restarting;
    process.kill(pids[0]!, 'SIGKILL');
    await vi.waitFor(
      () => {
        expect(served.output().slice(before)).toMatch(/rolling restart done/);
        expect(served.output().slice(before)).toMatch(new RegExp(`worker ${pids[0]} died`));
        expect(workersOf(primary).size).toBe(2);
        for (const pid of pids) expect(workersOf(primary).has(pid)).toBe(false);
      },
      { timeout: 60_000, interval: 100 },
    );
    // Settled: a replacement still due would start within its back-off (250 ms at first) and show.
    const until = Date.now() + 3_000;
    while (Date.now() < until) {
      expect(workersOf(primary).size).toBe(2);
      await new Promise((r) => setTimeout(r, 100));
    }
    const after = await runLoad(`${served.url}/hello.txt`, 200, 8);
    expect(after.failed).toBe(0);
  });

  it('passes a sync upload to every worker, restarts on a valid settings edit and keeps serving through a broken one', async () => {
    const h = home({ IsConfigurationWatching: true });
    const served = await serveWorkers(h);
    const dir = fs.mkdtempSync(path.join(h.home, 'upload-'));
    fs.writeFileSync(path.join(dir, 'page.html'), '<p>new</p>');
    const upload = await runAck(
      [
        'sync',
        'upload',
        path.join(dir, 'page.html'),
        '--module',
        'wwwroot',
        '--path',
        '/HDS/page.html',
        '--url',
        served.url,
      ],
      {
        env: { ACK_SYNC_TOKEN: TOKEN, ACK_URL: '', ACK_HOST_ACCESS_ID: '' },
      },
    );
    expect(upload.code).toBe(0);
    await waitForOutput(served, /cache invalidation from another worker: contract-change wwwroot .*page\.html/);
    for (let i = 0; i < 6; i++) {
      // A fresh connection each time: the primary hands them to the workers in turn.
      const res = await fetch(`${served.url}/view/page.html`, { headers: { Connection: 'close' } });
      expect(await res.text()).toBe('<p>new</p>');
    }

    const settingsFile = path.join(h.appDir, 'appsettings.json');
    const good = fs.readFileSync(settingsFile, 'utf8');
    fs.writeFileSync(settingsFile, good.replace('"AppSettings": {', '"AppSettings": { "SystemID": 5,'));
    await waitForOutput(
      served,
      /configuration change in .*appsettings\.json not applied; the workers keep serving: .*SystemID: expected a string/,
    );
    expect((await fetch(`${served.url}/hello.txt`)).status).toBe(200);
    const moduleJson = path.join(h.home, 'modules', 'wwwroot', 'module.json');
    fs.writeFileSync(moduleJson, '{ "ModuleID": "wwwroot", ');
    await waitForOutput(served, /configuration change in .*module\.json not applied; the workers keep serving/);
    expect((await fetch(`${served.url}/hello.txt`)).status).toBe(200);
    expect(served.output()).not.toMatch(/rolling restart \(/);
    fs.writeFileSync(moduleJson, JSON.stringify({ ModuleID: 'wwwroot', ModuleConfig: { FileSyncTokens: [TOKEN] } }));

    fs.writeFileSync(settingsFile, good.replace('"AppSettings": {', '"AppSettings": { "SystemID": "NEW",'));
    await waitForOutput(served, /rolling restart \(.*appsettings\.json changed\)/);
    await waitForOutput(served, /rolling restart done/);
    expect((await fetch(`${served.url}/hello.txt`)).status).toBe(200);
  });

  it('serves HTTPS (HTTP/2 and HTTP/1.1) from every worker on one port, the development certificate made once, HTTP/2 clients served through a rolling restart, a renewed certificate taken by every worker', async () => {
    const h = home({ RunningEnvironment: 'D' });
    const served = await serveWorkers(h, 2, ['--https-port', '0']);
    await waitForOutput(served, /(endpoint Https on https:\/\/[\s\S]*){2}/);
    const tlsUrls = [...served.output().matchAll(/endpoint Https on (https:\/\/[^\s]+)/g)].map((m) => m[1]!);
    expect(new Set(tlsUrls).size).toBe(1);
    // The primary made it before forking: no two workers write it at once.
    expect(served.output().match(/development certificate created/g)).toHaveLength(1);
    const tlsUrl = tlsUrls[0]!;
    expect(await https1Client(tlsUrl)({ path: '/hello.txt' })).toMatchObject({
      version: '1.1',
      status: 200,
      text: 'hello',
    });

    let reloadAsked: Promise<{ code: number | null }> | undefined;
    let stopAt = Infinity;
    const before = served.output().length;
    const result = await runHttp2Load(`${tlsUrl}/hello.txt`, 8, (done) => {
      if (done >= 500 && !reloadAsked) reloadAsked = runAck(['reload', '--app-dir', h.appDir]);
      // Until the restart is over, and a few hundred requests after it.
      if (stopAt === Infinity && /rolling restart done/.test(served.output().slice(before))) stopAt = done + 300;
      return done < stopAt;
    });
    expect((await reloadAsked!).code).toBe(0);
    expect(result.failures).toEqual([]);
    expect(result.failed).toBe(0);
    // Each retired worker sent its sessions GOAWAY, and the clients moved to a new session.
    expect(result.sessions).toBeGreaterThan(8);
    expect(
      served
        .output()
        .slice(before)
        .match(/stop asked by the primary: stopping/g),
    ).toHaveLength(2);
    console.log(
      `HTTP/2 through a rolling restart: ${result.ok} ok, ${result.failed} failed, ${result.sessions} sessions, ${result.retriedRefusedStream} resent after a refused stream`,
    );

    // A certificate replaced on disk reaches every worker: each watches its own files.
    const files = devCertificateFiles(h.home);
    const renewed = makeTestCertificate(path.join(h.home, 'renewed'), 'dev', 'localhost-renewed');
    fs.renameSync(renewed.key, files.key);
    fs.renameSync(renewed.cert, files.cert);
    const fingerprint = new crypto.X509Certificate(fs.readFileSync(files.cert)).fingerprint256;
    const { hostname, port } = new URL(tlsUrl);
    const seenOnce = () =>
      new Promise<string>((resolve, reject) => {
        const socket = tls.connect(
          { host: hostname, port: Number(port), rejectUnauthorized: false, ALPNProtocols: ['h2'] },
          () => {
            resolve(socket.getPeerCertificate().fingerprint256);
            socket.end();
          },
        );
        socket.on('error', reject);
      });
    // New connections go to the workers in turn: four in a row with the new certificate cover both.
    await vi.waitFor(
      async () => {
        for (let i = 0; i < 4; i++) expect(await seenOnce()).toBe(fingerprint);
      },
      { timeout: 20_000, interval: 200 },
    );
    const h2 = nodeHttp2Client(tlsUrl);
    expect((await h2.send({ path: '/hello.txt' })).status).toBe(200);
    await h2.close();
  });

  it('passes contract sync and sync upload events to the live-reload sockets of every worker', async () => {
    const HOST_ACCESS_ID = 'workers-host-access';
    const h = home({ RunningEnvironment: 'D', UseContractSync: true, HostAccessID: HOST_ACCESS_ID });
    const served = await serveWorkers(h);
    // Four sockets: the primary hands new connections to the workers in turn.
    const sockets = await Promise.all(
      Array.from({ length: 4 }, async () => {
        const socket = new WebSocket(`${served.url.replace(/^http/, 'ws')}/wwwroot/api/live-reload`);
        await once(socket, 'open');
        const seen: string[] = [];
        socket.on('message', (data) => seen.push(...(JSON.parse(data.toString()) as { paths: string[] }).paths));
        return { socket, seen };
      }),
    );

    const synced = new FormData();
    synced.append('moduleID', 'wwwroot');
    synced.append('contractType', 'wwwroot');
    synced.append('changeType', 'Created');
    synced.append('destFilePath', 'app/synced.html');
    synced.append('file', new Blob(['<p>synced</p>']), 'synced.html');
    const contract = await fetch(`${served.url}/contractsync`, {
      method: 'POST',
      body: synced,
      headers: { hostAccessID: HOST_ACCESS_ID },
    });
    expect(contract.status).toBe(200);
    await waitForOutput(served, /cache invalidation from another worker: contract-change wwwroot .*synced\.html/);
    for (const { seen } of sockets)
      await vi.waitFor(() => expect(seen).toContain('/wwwroot/app/synced.html'), { timeout: 15_000 });

    const upload = new FormData();
    upload.append('moduleName', 'wwwroot');
    upload.append('changeType', 'Changed');
    upload.append('filePath', 'HDS/page.html');
    upload.append('file', new Blob(['<p>uploaded</p>']), 'page.html');
    const uploaded = await fetch(`${served.url}/wwwroot/api/sync/upload`, {
      method: 'POST',
      body: upload,
      headers: { authorization: `Basic ${Buffer.from(`${TOKEN}:`).toString('base64')}` },
    });
    expect(uploaded.status).toBe(200);
    await waitForOutput(served, /cache invalidation from another worker: contract-change wwwroot .*page\.html/);
    for (const { seen } of sockets)
      await vi.waitFor(() => expect(seen).toContain('/view/page.html'), { timeout: 15_000 });
    for (const { socket } of sockets) socket.close();
  });

  it("passes a sync upload to another module's refreshContract hook and contract-change subscribers on every worker", async () => {
    const h = home({ LoadModules: ['wwwroot', 'transact'] });
    h.write('modules/transact/module.json', { ModuleID: 'transact', EntryPoint: './index.mjs' });
    // A module with the hook (named as a contract type, as sync upload requires). Each worker records what its hook and its subscription heard, and says which worker it is.
    h.write(
      'modules/transact/index.mjs',
      `export default (ctx) => {
  const hooked = [];
  const heard = [];
  ctx.host.contractChanges.subscribe((event) => heard.push(event.moduleId + ' ' + event.changeType + ' ' + event.filePath));
  const router = ctx.host.createRouter();
  router.get('/', (req, res) => res.json({ pid: process.pid, hooked, heard }));
  return {
    routes: [{ mount: '/transact/api', handler: router }],
    refreshContract(change) { hooked.push(change.changeType + ' ' + change.filePath); },
  };
};`,
    );
    const served = await serveWorkers(h);
    const upload = new FormData();
    upload.append('moduleName', 'transact');
    upload.append('changeType', 'Created');
    upload.append('filePath', 'HDS/query.json');
    upload.append('file', new Blob(['{}']), 'query.json');
    const uploaded = await fetch(`${served.url}/wwwroot/api/sync/upload`, {
      method: 'POST',
      body: upload,
      headers: { authorization: `Basic ${Buffer.from(`${TOKEN}:`).toString('base64')}`, connection: 'close' },
    });
    expect(uploaded.status).toBe(200);
    expect(await uploaded.json()).toMatchObject({ refresh: { ok: true, via: 'hook' } });
    // A new connection each time: the primary hands connections to the workers in turn.
    const seen = async () =>
      (await (await fetch(`${served.url}/transact/api`, { headers: { connection: 'close' } })).json()) as {
        pid: number;
        hooked: string[];
        heard: string[];
      };
    await vi.waitFor(
      async () => {
        const all = await Promise.all(Array.from({ length: 4 }, seen));
        expect(new Set(all.map((w) => w.pid)).size).toBe(2);
        for (const w of all) {
          expect(w.hooked).toEqual(['Created HDS/query.json']);
          expect(w.heard).toEqual(['transact Created HDS/query.json']);
        }
      },
      { timeout: 15_000, interval: 100 },
    );
  });

  it('refuses a signed-out authentication cookie on every worker, without a shared store (the bus carries it)', async () => {
    const h = signInHome();
    const served = await serveWorkers(h);
    const signIn = await fetch(`${served.url}/wwwroot/api/dev-account/sign-in`, { redirect: 'manual' });
    expect(signIn.status).toBe(302);
    const cookie = signIn.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    // A new connection each time: the primary hands connections to the workers in turn.
    const whoami = async () =>
      (await (await fetch(`${served.url}/whoami/api`, { headers: { cookie, connection: 'close' } })).json()) as {
        pid: number;
        user: string | null;
      };
    const before = await Promise.all(Array.from({ length: 4 }, whoami));
    expect(new Set(before.map((w) => w.pid)).size).toBe(2);
    expect(before.map((w) => w.user)).toEqual(Array(4).fill('leaver'));
    const out = await fetch(`${served.url}/wwwroot/api/dev-account/sign-out`, {
      method: 'POST',
      headers: { cookie, accept: 'application/json', connection: 'close' },
    });
    expect(out.status).toBe(204);
    // The same cookie, replayed to both workers: nobody, on each.
    await vi.waitFor(
      async () => {
        const after = await Promise.all(Array.from({ length: 4 }, whoami));
        expect(new Set(after.map((w) => w.pid)).size).toBe(2);
        expect(after.map((w) => w.user)).toEqual(Array(4).fill(null));
      },
      { timeout: 10_000, interval: 100 },
    );
  });

  it('refuses 40 signed-out cookies on every worker after a rolling restart (SIGHUP), once a new worker has signed another out', async () => {
    const h = signInHome();
    const served = await serveWorkers(h);
    const signIn = async () => {
      const res = await fetch(`${served.url}/wwwroot/api/dev-account/sign-in`, {
        redirect: 'manual',
        headers: { connection: 'close' },
      });
      expect(res.status).toBe(302);
      return res.headers
        .getSetCookie()
        .map((c) => c.split(';')[0])
        .join('; ');
    };
    const signOut = async (cookie: string) => {
      const res = await fetch(`${served.url}/wwwroot/api/dev-account/sign-out`, {
        method: 'POST',
        headers: { cookie, accept: 'application/json', connection: 'close' },
      });
      expect(res.status).toBe(204);
    };
    const userOf = async (cookie: string) =>
      (await (await fetch(`${served.url}/whoami/api`, { headers: { cookie, connection: 'close' } })).json()) as {
        user: string | null;
        pid: number;
      };
    const earlier: string[] = [];
    for (let i = 0; i < 40; i++) earlier.push(await signIn());
    for (const cookie of earlier) await signOut(cookie);
    const last = await signIn();
    expect((await userOf(last)).user).toBe('leaver');
    const before = served.output().length;
    process.kill(served.child.pid!, 'SIGHUP');
    await waitForOutput(served, /rolling restart done/);
    expect(served.output().slice(before)).toMatch(/rolling restart done/);
    // The same cookie signed out on each new worker, the second time once the other worker has heard
    // of it (the bus): that worker's first touch of the sign-out file is then the append.
    const heard = () => served.output().split('cache invalidation from another worker: sign-out').length;
    const signedOutOn = new Set<number>();
    for (let i = 0; i < 40 && signedOutOn.size < 2; i++) {
      const before = heard();
      const res = await fetch(`${served.url}/whoami/api/sign-out`, {
        method: 'POST',
        headers: { cookie: last, connection: 'close' },
      });
      expect(res.status).toBe(200);
      signedOutOn.add(((await res.json()) as { pid: number }).pid);
      await vi.waitFor(() => expect(heard()).toBeGreaterThan(before), { timeout: 10_000, interval: 50 });
    }
    expect(signedOutOn.size).toBe(2);
    // Each earlier cookie twice, a new connection each time: both new workers are asked.
    const replays = await Promise.all([...earlier, ...earlier, last].map(userOf));
    expect(new Set(replays.map((r) => r.pid))).toEqual(signedOutOn);
    expect(replays.filter((u) => u.user !== null)).toEqual([]);
  });

  it('stops with exit 1 and the store named (never its password) when the session database is not there', async () => {
    const h = hosts.home({
      AppSettings: {
        LoadModules: [],
        SessionState: {
          CacheType: 'MySql',
          StoreStartupWaitSeconds: 1,
          MySqlConnectionString: 'Server=127.0.0.1;Port=1;Uid=root;Pwd=never-shown-77;',
        },
      },
      Serilog: { WriteTo: [] },
    });
    for (const extra of [[], ['--workers', '2']]) {
      const run = await runAck(['serve', '--app-dir', h.appDir, '--port', '0', '--host', '127.0.0.1', ...extra], {
        timeoutMs: 30_000,
      });
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/session store MySql at 127\.0\.0\.1:1 is not reachable after 1 s/);
      expect(run.stdout + run.stderr).not.toContain('never-shown-77');
    }
    expect(fs.existsSync(path.join(h.home, '.ack', 'ack.pid'))).toBe(false);
  });

  it('ack reload over a home whose settings do not read exits 2 (bad input), naming the setting', async () => {
    const h = home({ ServerPort: 'eighty' });
    const run = await runAck(['reload', '--app-dir', h.appDir]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^ack: .*appsettings\.json:\d+:\d+: AppSettings:ServerPort: expected an integer/m);
    expect(run.stderr).not.toMatch(/^\s+at /m);
  });

  it('ack reload waits for the restart: a successor that cannot start is reported, exit 1; --no-wait returns at once', async () => {
    const h = home();
    const served = await serveWorkers(h);
    const primary = Number(/primary (\d+): starting/.exec(served.output())![1]);
    const asked = await runAck(['reload', '--app-dir', h.appDir, '--no-wait'], { timeoutMs: 60_000 });
    expect(asked.code).toBe(0);
    expect(asked.stdout).toBe(`rolling restart asked of primary ${primary}\n`);
    await waitForOutput(served, /rolling restart done/);
    const settings = path.join(h.appDir, 'appsettings.json');
    const json = JSON.parse(fs.readFileSync(settings, 'utf8'));
    // Settings that read, and a session store new workers cannot reach: the first successor fails.
    json.AppSettings.SessionState = {
      CacheType: 'MySql',
      MySqlConnectionString: 'Server=127.0.0.1;Port=1;Uid=root;Pwd=x;',
      StoreStartupWaitSeconds: 1,
    };
    fs.writeFileSync(settings, JSON.stringify(json));
    const failed = await runAck(['reload', '--app-dir', h.appDir], { timeoutMs: 60_000 });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(
      /^ack: rolling restart stopped after 0 worker\(s\) replaced: worker \d+ exited before listening \(code 1\); the workers serving: \d+, \d+$/m,
    );
    expect(failed.stdout).toBe('');
  });

  it('ack reload without a running primary says so', async () => {
    const h = home();
    const run = await runAck(['reload', '--app-dir', h.appDir]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/no `ack serve --workers` runs over this home/);
  });
});

import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { useTestHosts, type TestHome } from '@ack/host/test-support';
import { runAck, startAckServe, type ServingAck } from '../test-support/spawn-ack.js';
import { runLoad } from '../test-support/load.js';

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
    { AppSettings: { LoadModules: ['wwwroot'], ...appSettings }, Serilog: { MinimumLevel: 'Debug', WriteTo: [{ Name: 'Console', Args: {} }] } },
    {
      'modules/wwwroot/module.json': { ModuleID: 'wwwroot', ModuleConfig: { FileSyncTokens: [TOKEN] } },
      'modules/wwwroot/wwwroot/hello.txt': 'hello',
      'contracts/wwwroot/HDS/page.html': '<p>old</p>',
    },
  );
}

async function serveWorkers(h: TestHome, workers = 2): Promise<ServingAck> {
  const served = await startAckServe(['--app-dir', h.appDir, '--port', '0', '--host', '127.0.0.1', '--workers', String(workers)]);
  running.push(served);
  await waitForOutput(served, new RegExp(`(listening on .*[\\s\\S]*){${workers}}`));
  return served;
}

async function waitForOutput(served: ServingAck, pattern: RegExp, timeout = 60_000): Promise<RegExpMatchArray> {
  let match: RegExpMatchArray | null = null;
  await vi.waitFor(() => {
    match = served.output().match(pattern);
    expect(match, `waiting for ${pattern} in:\n${served.output().slice(-2000)}`).not.toBeNull();
  }, { timeout, interval: 100 });
  return match!;
}

describe('ack serve --workers', () => {
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
    expect(reload.stdout).toMatch(/rolling restart asked of primary \d+/);
    const done = await waitForOutput(served, /rolling restart done; workers (\d+), (\d+)/);
    expect(result.failures).toEqual([]);
    expect(result.failed).toBe(0);
    expect(result.ok).toBe(20_000);
    expect(served.output().indexOf('rolling restart (SIGHUP)', before)).toBeGreaterThan(-1);
    // Both workers were replaced, each after its successor listened.
    expect(served.output().slice(0, before)).not.toMatch(/stop asked by the primary/);
    expect(served.output().slice(before).match(/stop asked by the primary: stopping/g)).toHaveLength(2);
    expect(Number(done[1])).not.toBe(Number(done[2]));
    console.log(`rolling restart under load: ${result.ok} ok, ${result.failed} failed, ${result.retriedOnReusedSocket} resent after a kept-alive connection closed`);
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

  it('passes a sync upload to every worker, restarts on a valid settings edit and keeps serving through a broken one', async () => {
    const h = home({ IsConfigurationWatching: true });
    const served = await serveWorkers(h);
    const dir = fs.mkdtempSync(path.join(h.home, 'upload-'));
    fs.writeFileSync(path.join(dir, 'page.html'), '<p>new</p>');
    const upload = await runAck(['sync', 'upload', path.join(dir, 'page.html'), '--module', 'wwwroot', '--path', '/HDS/page.html', '--url', served.url], {
      env: { ACK_SYNC_TOKEN: TOKEN, ACK_URL: '', ACK_HOST_ACCESS_ID: '' },
    });
    expect(upload.code).toBe(0);
    await waitForOutput(served, /cache invalidation from another worker: file .*page\.html/);
    for (let i = 0; i < 6; i++) {
      // A fresh connection each time: the primary hands them to the workers in turn.
      const res = await fetch(`${served.url}/view/page.html`, { headers: { Connection: 'close' } });
      expect(await res.text()).toBe('<p>new</p>');
    }

    const settingsFile = path.join(h.appDir, 'appsettings.json');
    const good = fs.readFileSync(settingsFile, 'utf8');
    fs.writeFileSync(settingsFile, good.replace('"AppSettings": {', '"AppSettings": { "SystemID": 5,'));
    await waitForOutput(served, /configuration change in .*appsettings\.json not applied; the workers keep serving: .*SystemID: expected a string/);
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

  it('stops with exit 1 and the store named (never its password) when the session database is not there', async () => {
    const h = hosts.home({
      AppSettings: {
        LoadModules: [],
        SessionState: { CacheType: 'MySql', StoreStartupWaitSeconds: 1, MySqlConnectionString: 'Server=127.0.0.1;Port=1;Uid=root;Pwd=never-shown-77;' },
      },
      Serilog: { WriteTo: [] },
    });
    for (const extra of [[], ['--workers', '2']]) {
      const run = await runAck(['serve', '--app-dir', h.appDir, '--port', '0', '--host', '127.0.0.1', ...extra], { timeoutMs: 30_000 });
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/session store MySql at 127\.0\.0\.1:1 is not reachable after 1 s/);
      expect(run.stdout + run.stderr).not.toContain('never-shown-77');
    }
    expect(fs.existsSync(path.join(h.home, '.ack', 'ack.pid'))).toBe(false);
  });

  it('ack reload without a running primary says so', async () => {
    const h = home();
    const run = await runAck(['reload', '--app-dir', h.appDir]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/no `ack serve --workers` runs over this home/);
  });
});

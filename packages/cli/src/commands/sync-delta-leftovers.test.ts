import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AckModuleFactory } from '@ack/host';
import { testAppSettings, useTestHosts, type TestHost } from '@ack/host/test-support';
import { wwwrootModule } from '@ack/wwwroot';
import { useCleanups } from '../test-support/cleanups.js';
import { runAck } from '../test-support/spawn-ack.js';
import { workDir } from '../test-support/work.js';

// The delta push's edges (docs/sync.md "The delta") with the BUILT `ack` against real hosts: two
// local names for one remote path, folders emptied by --delete, files whose refresh failed.

const TOKEN = 'leftovers-cli-token';
const env = { ACK_SYNC_TOKEN: TOKEN, ACK_URL: '' };
const hosts = useTestHosts();
const cleanups = useCleanups();

/** A dbclient stand-in whose refresh route fails for paths containing `bad` while `failing` is set. */
function dbclient(state: { failing: boolean; calls: string[] }): AckModuleFactory {
  return (ctx) => {
    const router = ctx.host.createRouter();
    router.get('/query/refresh', (req, res) => {
      const file = String(req.query.filePath);
      state.calls.push(file);
      if (state.failing && file.includes('bad')) return void res.status(500).json(false);
      res.json(true);
    });
    return { routes: [{ mount: '/dbclient/api', handler: router }] };
  };
}

async function host(
  files: Record<string, string> = {},
  options: { releases?: boolean; refresh?: { failing: boolean; calls: string[] } } = {},
): Promise<TestHost & { hds: string }> {
  const home = hosts.home(
    testAppSettings({ AppSettings: { LoadModules: ['wwwroot', ...(options.refresh ? ['dbclient'] : [])] } }),
    {
      'modules/wwwroot/module.json': {
        ModuleID: 'wwwroot',
        ModuleConfig: { FileSyncTokens: [TOKEN], ...(options.releases ? { IsEnabledReleases: true } : {}) },
      },
      ...(options.refresh ? { 'modules/dbclient/module.json': { ModuleID: 'dbclient' } } : {}),
      ...Object.fromEntries(Object.entries(files).map(([k, v]) => [`contracts/wwwroot/${k}`, v])),
    },
  );
  const running = await hosts.start(home, {
    wwwroot: wwwrootModule,
    ...(options.refresh ? { dbclient: dbclient(options.refresh) } : {}),
  });
  return { ...running, hds: path.join(home.home, 'contracts', 'wwwroot', 'HDS') };
}

const upload = (dir: string, url: string, ...extra: string[]) =>
  runAck(['sync', 'upload', dir, '--module', 'wwwroot', '--path', 'HDS/', '--url', url, ...extra], { env });

describe('two local names for one remote path', () => {
  it('refuses a\\b.html beside a/b.html before anything is sent (exit 2); a\\c.html alone goes as a/c.html', async () => {
    const h = await host();
    const dir = workDir(cleanups, { 'a\\b.html': 'one', 'a/b.html': 'two' });
    const r = await upload(dir, h.url);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /^ack: two local files go to one path on the host, HDS\/a\/b\.html: a[\\/]b\.html and a[\\/]b\.html; rename one$/m,
    );
    expect(fs.existsSync(h.hds)).toBe(false);

    const fine = workDir(cleanups, { 'a\\c.html': 'c', 'a/b.html': 'b' });
    const ok = await upload(fine, h.url);
    expect(ok.code).toBe(0);
    expect(fs.readFileSync(path.join(h.hds, 'a', 'c.html'), 'utf8')).toBe('c');
    expect(fs.readFileSync(path.join(h.hds, 'a', 'b.html'), 'utf8')).toBe('b');
  });
});

describe('--delete removes the folders it empties', () => {
  const files = {
    'HDS/keep/k.html': 'k',
    'HDS/old/deep/gone.js': 'g',
    'HDS/old/also.js': 'a',
    'HDS/mixed/x.js': 'x',
    'HDS/mixed/.htaccess': 'h',
  };
  it('file by file: emptied folders go, a folder with a dotfile left stays', async () => {
    const h = await host(files);
    const dir = workDir(cleanups, { 'keep/k.html': 'k' });
    const r = await upload(dir, h.url, '--delete');
    expect(r.code).toBe(0);
    expect(fs.existsSync(path.join(h.hds, 'old'))).toBe(false);
    expect(fs.readdirSync(path.join(h.hds, 'mixed'))).toEqual(['.htaccess']);
    expect(fs.readdirSync(h.hds).sort()).toEqual(['keep', 'mixed']);
  });

  it('in a release: the new release has no emptied folders, the one before keeps them', async () => {
    const h = await host(files, { releases: true });
    const dir = workDir(cleanups, { 'keep/k.html': 'k' });
    const r = await upload(dir, h.url, '--delete');
    expect(r.code).toBe(0);
    expect(fs.lstatSync(h.hds).isSymbolicLink()).toBe(true);
    expect(fs.readdirSync(h.hds).sort()).toEqual(['keep', 'mixed']);
    const back = await runAck(['sync', 'rollback', '--module', 'wwwroot', '--path', 'HDS/', '--url', h.url], { env });
    expect(back.code).toBe(0);
    expect(fs.readFileSync(path.join(h.hds, 'old', 'deep', 'gone.js'), 'utf8')).toBe('g');
  });
});

describe('a file stored whose refresh failed', () => {
  it('is sent again by the next push until its refresh passes; files refreshed are not', async () => {
    const state = { failing: true, calls: [] as string[] };
    const h = await host({}, { refresh: state });
    const dir = workDir(cleanups, { 'bad.xml': '<b/>', 'good.xml': '<g/>' });
    const push = () =>
      runAck(['sync', 'upload', dir, '--module', 'dbclient', '--path', 'HDS/', '--url', h.url, '--json'], { env });
    const first = await push();
    expect(first.code).toBe(1);
    expect(
      JSON.parse(first.stdout)
        .results.filter((r: { ok: boolean }) => !r.ok)
        .map((r: { path: string }) => r.path),
    ).toEqual(['HDS/bad.xml']);
    // Still failing: sent again (the host lists it as stored, with the same digest).
    const second = await push();
    expect(second.code).toBe(1);
    expect(JSON.parse(second.stdout).results.map((r: { path: string }) => r.path)).toEqual(['HDS/bad.xml']);
    state.failing = false;
    const third = await push();
    expect(third.code).toBe(0);
    expect(JSON.parse(third.stdout).results.map((r: { path: string; ok: boolean }) => [r.path, r.ok])).toEqual([
      ['HDS/bad.xml', true],
    ]);
    const fourth = await push();
    expect(fourth.code).toBe(0);
    expect(JSON.parse(fourth.stdout).results).toEqual([]);
    expect(state.calls.filter((c) => c.includes('good'))).toHaveLength(1);
  });
});

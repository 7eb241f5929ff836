import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { testAppSettings, useTestHosts, type TestHost } from '@ack/host/test-support';
import { wwwrootModule } from '@ack/wwwroot';
import { useCleanups } from '../test-support/cleanups.js';
import { runAck, startAckServe } from '../test-support/spawn-ack.js';
import { workDir } from '../test-support/work.js';

// Folder pushes as releases, with the BUILT `ack` against real hosts (docs/releases.md): a push
// under a prefix is staged and switched in one step, `ack sync releases` lists the history,
// `ack sync rollback` switches back to a tree whose listing is byte for byte the earlier one, and
// a fleet where one host dies mid-stage switches nowhere.

const TOKEN = 'release-cli-token';
const env = { ACK_SYNC_TOKEN: TOKEN, ACK_URL: '' };
const hosts = useTestHosts();
const cleanups = useCleanups();

/** A home with releases on; `served` keeps the console log, where `ack serve` says its address. */
function releaseHome(served = false) {
  const app = { AppSettings: { LoadModules: ['wwwroot'] } };
  return hosts.home(served ? app : testAppSettings(app), {
    'modules/wwwroot/module.json': {
      ModuleID: 'wwwroot',
      ModuleConfig: { FileSyncTokens: [TOKEN], IsEnabledReleases: true },
    },
    'contracts/wwwroot/TOP.html': 'top',
  });
}

async function host(): Promise<TestHost & { contracts: string }> {
  const home = releaseHome();
  const running = await hosts.start(home, { wwwroot: wwwrootModule });
  return { ...running, contracts: path.join(home.home, 'contracts', 'wwwroot') };
}

const ack = (...args: string[]) => runAck(args, { env, timeoutMs: 60_000 });
const push = (dir: string, urls: string[], ...extra: string[]) =>
  ack('sync', 'upload', dir, '--module', 'wwwroot', '--path', 'HDS/', ...urls.flatMap((u) => ['--url', u]), ...extra);
const view = async (url: string, name: string) => {
  const res = await fetch(`${url}/view/${name}`);
  return `${res.status} ${res.status === 200 ? await res.text() : ''}`.trim();
};
/** The sync listing of the prefix: the files' paths, sizes and digests, as the delta reads them. */
const listing = async (url: string) => {
  const res = await fetch(`${url}/wwwroot/api/sync/list?moduleName=wwwroot&prefix=HDS`, {
    headers: { Authorization: `Basic ${Buffer.from(`${TOKEN}:`).toString('base64')}` },
  });
  return (await res.text()).split('\n').filter((l) => l.startsWith('{"path"'));
};

describe('ack sync upload <dir> --path P/ to a host with releases', () => {
  it('switches each push in one step, lists the history, and rolls back to the same listing', async () => {
    const h = await host();
    const dir = workDir(cleanups, { 'a.html': 'v1', 'b.js': 'b1' });
    const first = await push(dir, [h.url]);
    expect(first.code, first.stderr).toBe(0);
    const id1 = /release (\S+) of HDS\/ live on /.exec(first.stdout)?.[1];
    expect(id1, first.stdout).toBeDefined();
    expect(await view(h.url, 'a.html')).toBe('200 v1');
    const v1Listing = await listing(h.url);
    expect(v1Listing).toHaveLength(2);

    fs.writeFileSync(path.join(dir, 'a.html'), 'v2');
    fs.writeFileSync(path.join(dir, 'c.css'), 'c');
    fs.rmSync(path.join(dir, 'b.js'));
    const second = await push(dir, [h.url], '--delete');
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toMatch(/1 created, 1 changed, 1 deleted/);
    const id2 = /release (\S+) of HDS\/ live on /.exec(second.stdout)?.[1];
    expect(id2).not.toBe(id1);
    expect([await view(h.url, 'a.html'), await view(h.url, 'c.css'), await view(h.url, 'b.js')]).toEqual([
      '200 v2',
      '200 c',
      '404',
    ]);
    // Outside the prefix, nothing moved.
    expect(fs.readFileSync(path.join(h.contracts, 'TOP.html'), 'utf8')).toBe('top');

    const listed = await ack('sync', 'releases', '--module', 'wwwroot', '--path', 'HDS/', '--url', h.url, '--json');
    expect(listed.code, listed.stderr).toBe(0);
    const doc = JSON.parse(listed.stdout) as { hosts: { releases: { id: string; live: boolean; by: string }[] }[] };
    expect(doc.hosts[0]!.releases.map((r) => [r.id, r.live])).toEqual([
      [id2, true],
      [id1, false],
    ]);
    expect(listed.stdout).not.toContain(TOKEN);
    const text = await ack('sync', 'releases', '--module', 'wwwroot', '--path', 'HDS', '--url', h.url);
    expect(text.stdout).toContain(`* ${id2}  `);

    const back = await ack('sync', 'rollback', '--module', 'wwwroot', '--path', 'HDS/', '--url', h.url);
    expect(back.code, back.stderr).toBe(0);
    expect(back.stdout).toBe(`HDS/ on ${h.url}: release ${id1} live (3 files changed)\n`);
    expect(await listing(h.url)).toEqual(v1Listing);
    expect(await view(h.url, 'b.js')).toBe('200 b1');

    // Its neighbours: a release that is not there, and no prefix at all.
    const none = await ack(
      'sync',
      'rollback',
      '--module',
      'wwwroot',
      '--path',
      'HDS/',
      '--to',
      'r-none',
      '--url',
      h.url,
    );
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('404');
    const noPrefix = await ack('sync', 'rollback', '--module', 'wwwroot', '--path', '/', '--url', h.url);
    expect(noPrefix.code).toBe(2);
    expect(await listing(h.url)).toEqual(v1Listing);
  });
});

describe('a fleet push as one release', () => {
  it(
    'switches no host when one dies while the release is staged; both keep the old release',
    { timeout: 120_000 },
    async () => {
      const a = await host();
      const bHome = releaseHome(true);
      const args = ['--app-dir', bHome.appDir, '--port', '0', '--host', '127.0.0.1'];
      let b = await startAckServe(args);
      cleanups.push(() => {
        if (b.child.exitCode === null && b.child.signalCode === null) b.child.kill('SIGKILL');
      });
      const dir = workDir(cleanups, { 'a.html': 'v1' });
      const first = await push(dir, [a.url, b.url]);
      expect(first.code, first.stderr).toBe(0);
      expect(first.stdout.match(/ live on /g)).toHaveLength(2);

      // Enough to send that B is still staging when it dies.
      fs.writeFileSync(path.join(dir, 'a.html'), 'v2');
      for (let i = 0; i < 400; i++) fs.writeFileSync(path.join(dir, `f${i}.js`), `${i}`.repeat(20_000));
      const staging = path.join(bHome.home, 'contracts', 'wwwroot', '.ack-releases', 'HDS');
      const pushing = push(dir, [a.url, b.url], '--retries', '0', '--concurrency', '1');
      await vi.waitFor(() => expect(fs.readdirSync(staging).some((f) => f.endsWith('.staging'))).toBe(true), {
        timeout: 30_000,
        interval: 5,
      });
      b.child.kill('SIGKILL');
      const second = await pushing;
      expect(second.code).not.toBe(0);
      expect(second.stderr).toContain('no host switched');
      expect(second.stdout).not.toContain(' live on ');
      expect(await view(a.url, 'a.html')).toBe('200 v1');
      expect(await view(a.url, 'f0.js')).toBe('404');

      b = await startAckServe(args);
      expect(await view(b.url, 'a.html')).toBe('200 v1');
      expect(await view(b.url, 'f0.js')).toBe('404');
      // B's start removed what its death left staged.
      await vi.waitFor(() => expect(fs.readdirSync(staging).filter((f) => f.endsWith('.staging'))).toEqual([]));
      expect(
        fs.readdirSync(path.join(a.contracts, '.ack-releases', 'HDS')).filter((f) => f.endsWith('.staging')),
      ).toEqual([]);
    },
  );
});

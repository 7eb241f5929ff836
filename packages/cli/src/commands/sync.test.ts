import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useCleanups } from '../test-support/cleanups.js';
import { freePort, testAppSettings, useTestHosts, waitFor, type TestHost } from '@ack/host/test-support';
import { wwwrootModule } from '@ack/wwwroot';
import { runAck, watchAck } from '../test-support/spawn-ack.js';
import { workDir } from '../test-support/work.js';

// These tests run the BUILT `ack` binary (`pnpm build` first) against a host started here.

const TOKEN = 'cli-sync-token';
const HOST_KEY = 'cli-host-key';
const sha = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');

const hosts = useTestHosts();
// Registered after useTestHosts, so (hooks run as a stack) the work folders and children go before the host.
const cleanups = useCleanups();

async function host(): Promise<TestHost & { contracts: string }> {
  const home = hosts.home(
    testAppSettings({ AppSettings: { LoadModules: ['wwwroot'], UseContractSync: true, HostAccessID: HOST_KEY } }),
    {
      'modules/wwwroot/module.json': {
        ModuleID: 'wwwroot',
        ModuleConfig: { FileSyncTokens: [TOKEN], SharedFileConfigPath: '../config/shared_files.json' },
      },
      'config/shared_files.json': {
        items: [
          { requestPath: '/shared/a.css', hostFilePath: '../config/a.css' },
          { requestPath: '/shared/b.js', hostFilePath: '../config/b.js' },
        ],
      },
      'config/a.css': 'a{}',
      'config/b.js': 'b()',
    },
  );
  const running = await hosts.start(home, { wwwroot: wwwrootModule });
  return { ...running, contracts: path.join(home.home, 'contracts', 'wwwroot') };
}

const env = { ACK_SYNC_TOKEN: TOKEN, ACK_URL: '', ACK_HOST_ACCESS_ID: '' };

describe('ack sync upload', () => {
  it('uploads one file to the path given', async () => {
    const h = await host();
    const dir = workDir(cleanups, { 'page.html': '<p>from the cli</p>' });
    const run = await runAck(
      [
        'sync',
        'upload',
        path.join(dir, 'page.html'),
        '--module',
        'wwwroot',
        '--path',
        '/HDS/page.html',
        '--url',
        h.url,
      ],
      { env },
    );
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Created HDS/page.html (19 bytes)');
    expect(fs.readFileSync(path.join(h.contracts, 'HDS', 'page.html'), 'utf8')).toBe('<p>from the cli</p>');
  });

  it('puts one file under its own name in the folder a --path ending with / names, as cp does; without the / the path is the file', async () => {
    const h = await host();
    const dir = workDir(cleanups, { 'page.html': 'p' });
    const upload = (target: string) =>
      runAck(['sync', 'upload', path.join(dir, 'page.html'), '--module', 'wwwroot', '--path', target, '--url', h.url], {
        env,
      });
    expect((await upload('HDS/NEW/')).code).toBe(0);
    expect(fs.readFileSync(path.join(h.contracts, 'HDS', 'NEW', 'page.html'), 'utf8')).toBe('p');
    expect((await upload('HDS\\OLD\\')).code).toBe(0);
    expect(fs.readFileSync(path.join(h.contracts, 'HDS', 'OLD', 'page.html'), 'utf8')).toBe('p');
    expect((await upload('HDS/SAME')).code).toBe(0);
    expect(fs.statSync(path.join(h.contracts, 'HDS', 'SAME')).isFile()).toBe(true);
    const gone = await runAck(
      [
        'sync',
        'upload',
        'page.html',
        '--module',
        'wwwroot',
        '--path',
        'HDS/NEW/',
        '--change',
        'Deleted',
        '--url',
        h.url,
      ],
      { env, cwd: workDir(cleanups) },
    );
    expect(gone.code).toBe(0);
    expect(fs.existsSync(path.join(h.contracts, 'HDS', 'NEW', 'page.html'))).toBe(false);
  });

  it('uploads a folder with paths relative to it, without a progress bar when not on a terminal', async () => {
    const h = await host();
    const files = {
      'index.html': 'i',
      'js/app.js': 'app()',
      'js/lib/x.js': 'x',
      'css/site.css': 'c',
      '.hidden': 'no',
      '.git/config': 'no',
    };
    const dir = workDir(cleanups, files);
    const run = await runAck(['sync', 'upload', dir, '--module', 'wwwroot', '--path', 'HDS/app', '--url', h.url], {
      env,
    });
    expect(run.code).toBe(0);
    expect(run.stdout + run.stderr).not.toMatch(/\[#|\r/);
    expect(run.stdout).toContain('4 files uploaded');
    for (const rel of ['index.html', 'js/app.js', 'js/lib/x.js', 'css/site.css']) {
      expect(fs.readFileSync(path.join(h.contracts, 'HDS', 'app', rel), 'utf8')).toBe(files[rel as keyof typeof files]);
    }
    expect(fs.existsSync(path.join(h.contracts, 'HDS', 'app', '.hidden'))).toBe(false);
    expect(fs.existsSync(path.join(h.contracts, 'HDS', 'app', '.git'))).toBe(false);
  });

  it('prints one JSON document with --json, with the sha256 the host stored', async () => {
    const h = await host();
    const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    const dir = workDir(cleanups, { 'a.bin': bytes, 'b.txt': 'bee' });
    const run = await runAck(
      ['sync', 'upload', dir, '--module', 'wwwroot', '--path', 'HDS/bin', '--url', h.url, '--json'],
      { env },
    );
    expect(run.code).toBe(0);
    const doc = JSON.parse(run.stdout);
    expect(doc.ok).toBe(true);
    expect(doc.results.map((r: { path: string; sha256: string; ok: boolean }) => [r.path, r.sha256, r.ok])).toEqual([
      ['HDS/bin/a.bin', sha(bytes), true],
      ['HDS/bin/b.txt', sha('bee'), true],
    ]);
    expect(fs.readFileSync(path.join(h.contracts, 'HDS', 'bin', 'a.bin')).equals(bytes)).toBe(true);
  });

  it('deletes with --change Deleted and refreshes with ack sync refresh', async () => {
    const h = await host();
    const dir = workDir(cleanups, { 'x.html': 'x' });
    expect(
      (
        await runAck(
          ['sync', 'upload', path.join(dir, 'x.html'), '--module', 'wwwroot', '--path', 'HDS/x.html', '--url', h.url],
          { env },
        )
      ).code,
    ).toBe(0);
    const refresh = await runAck(['sync', 'refresh', '--module', 'wwwroot', '--path', 'HDS/x.html', '--url', h.url], {
      env,
    });
    expect(refresh.code).toBe(0);
    expect(refresh.stdout).toContain('refreshed wwwroot/HDS/x.html');
    const del = await runAck(
      [
        'sync',
        'upload',
        'gone-locally.html',
        '--module',
        'wwwroot',
        '--path',
        'HDS/x.html',
        '--change',
        'deleted',
        '--url',
        h.url,
      ],
      { env, cwd: dir },
    );
    expect(del.code).toBe(0);
    expect(fs.existsSync(path.join(h.contracts, 'HDS', 'x.html'))).toBe(false);
  });

  it('exits 3 with one line when the token is refused', async () => {
    const h = await host();
    const dir = workDir(cleanups, { 'page.html': 'p' });
    const run = await runAck(['sync', 'upload', path.join(dir, 'page.html'), '--module', 'wwwroot', '--url', h.url], {
      env: { ...env, ACK_SYNC_TOKEN: 'wrong' },
    });
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(/refused the credentials \(sync\.invalid_token/);
    expect(run.stderr).not.toMatch(/\n\s+at /);
    expect(fs.existsSync(path.join(h.contracts, 'page.html'))).toBe(false);
  });

  it('exits 1 saying which host is unreachable; several hosts fail if any fails', async () => {
    const h = await host();
    const port = await freePort();
    const dir = workDir(cleanups, { 'page.html': 'p' });
    const file = path.join(dir, 'page.html');
    const run = await runAck(
      [
        'sync',
        'upload',
        file,
        '--module',
        'wwwroot',
        '--path',
        'HDS/p.html',
        '--url',
        `http://127.0.0.1:${port}`,
        '--retries',
        '1',
      ],
      { env },
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`cannot reach http://127.0.0.1:${port}`);
    expect(run.stderr).not.toMatch(/\n\s+at /);

    const both = await runAck(
      [
        'sync',
        'upload',
        file,
        '--module',
        'wwwroot',
        '--path',
        'HDS/p.html',
        '--url',
        h.url,
        '--url',
        `http://127.0.0.1:${port}`,
        '--retries',
        '0',
      ],
      { env },
    );
    expect(both.code).toBe(1);
    expect(both.stderr).toContain(`failed (on http://127.0.0.1:${port})`);
    expect(fs.readFileSync(path.join(h.contracts, 'HDS', 'p.html'), 'utf8')).toBe('p');
  });

  it('exits 2 for a missing local file, a bad path and a missing token', async () => {
    const h = await host();
    const missing = await runAck(['sync', 'upload', 'no-such-file.html', '--module', 'wwwroot', '--url', h.url], {
      env,
    });
    expect(missing.code).toBe(2);
    expect(missing.stderr.trim()).toBe('ack: no such file or folder: no-such-file.html');
    const dir = workDir(cleanups, { 'page.html': 'p' });
    const escape = await runAck(
      ['sync', 'upload', path.join(dir, 'page.html'), '--module', 'wwwroot', '--path', 'C:/x.html', '--url', h.url],
      { env },
    );
    expect(escape.code).toBe(2);
    expect(escape.stderr).toContain('sync.invalid_path');
    const noToken = await runAck(
      ['sync', 'upload', path.join(dir, 'page.html'), '--module', 'wwwroot', '--url', h.url],
      { env: { ...env, ACK_SYNC_TOKEN: '' } },
    );
    expect(noToken.code).toBe(2);
    expect(noToken.stderr.trim()).toBe('ack: no sync token: set ACK_SYNC_TOKEN (or --token)');
  });
});

describe('ack contract-sync and ack manifest', () => {
  it('writes both targets with the host access ID from ACK_HOST_ACCESS_ID, and exits 3 for a wrong one', async () => {
    const h = await host();
    const dir = workDir(cleanups, { 'TST010.json': '{"t":1}' });
    const file = path.join(dir, 'TST010.json');
    const ok = await runAck(
      [
        'contract-sync',
        file,
        '--module-id',
        'HDS',
        '--type',
        'transact',
        '--dest',
        'HDS/ZZW/TST010.json',
        '--url',
        h.url,
      ],
      { env: { ...env, ACK_HOST_ACCESS_ID: HOST_KEY } },
    );
    expect(ok.code).toBe(0);
    const home = h.home.home;
    expect(
      fs.readFileSync(path.join(home, 'modules', 'HDS', 'Contracts', 'transact', 'HDS', 'ZZW', 'TST010.json'), 'utf8'),
    ).toBe('{"t":1}');
    expect(fs.readFileSync(path.join(home, 'contracts', 'transact', 'HDS', 'ZZW', 'TST010.json'), 'utf8')).toBe(
      '{"t":1}',
    );
    const del = await runAck(
      [
        'contract-sync',
        file,
        '--module-id',
        'HDS',
        '--type',
        'transact',
        '--dest',
        'HDS/ZZW/TST010.json',
        '--delete',
        '--url',
        h.url,
        '--json',
      ],
      { env: { ...env, ACK_HOST_ACCESS_ID: HOST_KEY } },
    );
    expect(del.code).toBe(0);
    expect(JSON.parse(del.stdout).ok).toBe(true);
    expect(fs.existsSync(path.join(home, 'contracts', 'transact', 'HDS', 'ZZW', 'TST010.json'))).toBe(false);
    const refused = await runAck(['contract-sync', file, '--module-id', 'HDS', '--type', 'transact', '--url', h.url], {
      env: { ...env, ACK_HOST_ACCESS_ID: 'wrong' },
    });
    expect(refused.code).toBe(3);
  });

  it('prints the manifest paths, or JSON', async () => {
    const h = await host();
    const text = await runAck(['manifest', '--url', h.url], { env });
    expect(text.code).toBe(0);
    expect(text.stdout).toBe('/shared/a.css\n/shared/b.js\n');
    const json = await runAck(['manifest', '--url', h.url, '--json'], { env });
    expect(JSON.parse(json.stdout)).toEqual({
      ok: true,
      results: [
        { url: h.url, ok: true, manifest: [{ requestPath: '/shared/a.css' }, { requestPath: '/shared/b.js' }] },
      ],
    });
  });
});

describe('ack sync watch', () => {
  it('does not send again a file every host refused until it changes; a host it cannot reach is tried again', async () => {
    const h = await host();
    const dir = workDir(cleanups);
    const watching = watchAck(
      [dir, '--module', 'wwwroot', '--path', 'HDS/w', '--url', h.url, '--debounce', '50', '--json'],
      env,
    );
    const { child } = watching;
    const out = () => watching.output();
    cleanups.push(() => void child.kill('SIGKILL'));
    await waitFor(() => out().includes('"event":"watching"'), { timeout: 15_000, message: out });
    const events = () =>
      out()
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { event: string; path?: string; error?: string });
    // A control character: a name the host refuses (400), whatever is sent again.
    fs.writeFileSync(path.join(dir, 'bad\u0001.html'), 'x');
    fs.writeFileSync(path.join(dir, 'good.html'), 'g');
    await waitFor(() => events().some((e) => e.event === 'failed') && out().includes('"Created"'), {
      timeout: 15_000,
      message: out,
    });
    // A retry would come within a second (back-off from 1 s, with jitter): wait past it.
    await new Promise((r) => setTimeout(r, 1500));
    const about = events().filter((e) => e.path === 'bad\u0001.html');
    expect(about.map((e) => e.event)).toEqual(['failed']);
    expect(about[0]!.error).toContain('sync.invalid_path');
    expect(fs.readFileSync(path.join(h.contracts, 'HDS', 'w', 'good.html'), 'utf8')).toBe('g');
    // The neighbour: a host that cannot be reached may come back, so that push is retried.
    await h.close();
    fs.writeFileSync(path.join(dir, 'later.html'), 'l');
    await waitFor(() => events().some((e) => e.event === 'retry' && e.path === 'later.html'), {
      timeout: 15_000,
      message: out,
    });
    child.kill('SIGINT');
  });

  it('pushes a creation, a same-size edit and a deletion, and stops on SIGINT', async () => {
    const h = await host();
    const dir = workDir(cleanups, { 'existing.html': 'old' });
    const watching = watchAck(
      [dir, '--module', 'wwwroot', '--path', 'HDS/live', '--url', h.url, '--debounce', '50'],
      env,
    );
    const { child, exited } = watching;
    cleanups.push(() => void child.kill('SIGKILL'));
    await waitFor(() => watching.output().includes('watching '), {
      timeout: 15_000,
      message: () => `the watcher to start; output so far:\n${watching.output()}`,
    });

    const target = path.join(h.contracts, 'HDS', 'live', 'page.html');
    fs.writeFileSync(path.join(dir, 'page.html'), 'AAAA');
    // The CLI prints its line after the server answered: wait for both, the file and the line.
    await waitFor(
      () =>
        fs.existsSync(target) &&
        fs.readFileSync(target, 'utf8') === 'AAAA' &&
        watching.output().includes('Created HDS/live/page.html'),
      { timeout: 15_000, message: () => `the creation to be pushed; output so far:\n${watching.output()}` },
    );
    fs.writeFileSync(path.join(dir, 'page.html'), 'BBBB'); // same size, new content
    await waitFor(
      () => fs.readFileSync(target, 'utf8') === 'BBBB' && watching.output().includes('Changed HDS/live/page.html'),
      {
        timeout: 15_000,
        message: () => `the edit to be pushed; output so far:\n${watching.output()}`,
      },
    );
    fs.rmSync(path.join(dir, 'page.html'));
    await waitFor(() => !fs.existsSync(target) && watching.output().includes('Deleted HDS/live/page.html'), {
      timeout: 15_000,
      message: () => `the deletion to be pushed; output so far:\n${watching.output()}`,
    });
    expect(watching.output()).toMatch(
      /Created HDS\/live\/page\.html[\s\S]*Changed HDS\/live\/page\.html[\s\S]*Deleted HDS\/live\/page\.html/,
    );
    expect(fs.existsSync(path.join(h.contracts, 'HDS', 'live', 'existing.html'))).toBe(false); // not pushed: it did not change

    child.kill('SIGINT');
    expect(await exited).toBe(0);
  });
});

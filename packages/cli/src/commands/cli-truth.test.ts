import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort, testAppSettings, useTestHosts, waitFor, type TestHost } from '@ack/host/test-support';
import { wwwrootModule } from '@ack/wwwroot';
import { ACK_BIN, runAck, testCacheHome } from '../test-support/spawn-ack.js';
import { workDir } from '../test-support/work.js';

// The CLI tells the truth: one JSON document per --json run, progress only on a terminal,
// --dry-run sends nothing, watch checks credentials first and pushes with --initial.

const TOKEN = 'truth-token';
const hosts = useTestHosts();
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const fn of cleanups.splice(0).reverse()) fn();
});
const env = { ACK_SYNC_TOKEN: TOKEN, ACK_URL: '', ACK_HOST_ACCESS_ID: '' };

async function host(appSettings: Record<string, unknown> = {}): Promise<TestHost & { contracts: string }> {
  const home = hosts.home(testAppSettings({ AppSettings: { LoadModules: ['wwwroot'], ...appSettings } }), {
    'modules/wwwroot/module.json': { ModuleID: 'wwwroot', ModuleConfig: { FileSyncTokens: [TOKEN] } },
  });
  const running = await hosts.start(home, { wwwroot: wwwrootModule });
  return { ...running, contracts: path.join(home.home, 'contracts', 'wwwroot') };
}

/** Every file under a folder, for "nothing was written" checks. */
function tree(dir: string): string[] {
  return fs.existsSync(dir) ? (fs.readdirSync(dir, { recursive: true }) as string[]).sort() : [];
}

/** stdout must be exactly one JSON document; returns it. */
function oneDocument(stdout: string): Record<string, unknown> {
  const doc = JSON.parse(stdout) as Record<string, unknown>;
  expect(typeof doc).toBe('object');
  return doc;
}

describe('--json prints exactly one document, in one shape per command', () => {
  it('ack sync upload: success, bad usage, no token, refused token, unreachable host, missing file', async () => {
    const h = await host();
    const dir = workDir(cleanups, { 'HDS/a.html': 'a' });
    const port = await freePort();
    const keys = ['change', 'dryRun', 'module', 'ok', 'results'];
    const runs = {
      success: await runAck(['sync', 'upload', dir, '--module', 'wwwroot', '--url', h.url, '--json'], { env }),
      usage: await runAck(['sync', 'upload', dir, '--url', h.url, '--json'], { env }),
      noToken: await runAck(['sync', 'upload', dir, '--module', 'wwwroot', '--url', h.url, '--json'], {
        env: { ...env, ACK_SYNC_TOKEN: '' },
      }),
      refused: await runAck(['sync', 'upload', dir, '--module', 'wwwroot', '--url', h.url, '--json'], {
        env: { ...env, ACK_SYNC_TOKEN: 'wrong' },
      }),
      unreachable: await runAck(
        ['sync', 'upload', dir, '--module', 'wwwroot', '--url', `http://127.0.0.1:${port}`, '--retries', '0', '--json'],
        { env },
      ),
      missing: await runAck(['sync', 'upload', 'no-such-dir', '--module', 'wwwroot', '--url', h.url, '--json'], {
        env,
      }),
    };
    const expected = {
      success: [0, true],
      usage: [2, false],
      noToken: [2, false],
      refused: [3, false],
      unreachable: [1, false],
      missing: [2, false],
    } as const;
    for (const [name, run] of Object.entries(runs)) {
      const doc = oneDocument(run.stdout);
      const [code, ok] = expected[name as keyof typeof expected];
      expect(run.code, name).toBe(code);
      expect(doc.ok, name).toBe(ok);
      for (const key of keys) expect(doc, `${name} has ${key}`).toHaveProperty(key);
      expect(Array.isArray(doc.results), name).toBe(true);
      if (!ok) {
        const error = typeof doc.error === 'string' ? doc.error : (doc.results as Array<{ error?: string }>)[0]?.error;
        expect(typeof error, `${name} says what went wrong`).toBe('string');
      }
    }
    expect(runs.noToken.stdout).toContain('no sync token: set ACK_SYNC_TOKEN');
    expect(oneDocument(runs.noToken.stdout).exitCode).toBe(2);
    expect(oneDocument(runs.usage.stdout).error).toMatch(/--module/);
  });

  it('ack manifest and ack contract-sync: the same shape on success and on failure', async () => {
    const h = await host();
    const port = await freePort();
    for (const args of [
      ['manifest', '--url', h.url],
      ['manifest', '--url', `http://127.0.0.1:${port}`, '--retries', '0'],
      ['manifest', '--url', 'not a url'],
    ]) {
      const doc = oneDocument((await runAck([...args, '--json'], { env })).stdout);
      expect(Object.keys(doc)).toEqual(expect.arrayContaining(['ok', 'results']));
    }
    const dir = workDir(cleanups, { 'C.json': '{}' });
    const noKey = await runAck(
      ['contract-sync', path.join(dir, 'C.json'), '--module-id', 'HDS', '--type', 'transact', '--url', h.url, '--json'],
      { env },
    );
    expect(noKey.code).toBe(2);
    expect(oneDocument(noKey.stdout)).toMatchObject({
      ok: false,
      results: [],
      exitCode: 2,
      error: expect.stringMatching(/ACK_HOST_ACCESS_ID/),
    });
  });

  it('ack check and ack catalog check: a document even when the home cannot be read', async () => {
    const missing = path.join(os.tmpdir(), 'ack-no-such-home');
    expect(oneDocument((await runAck(['check', '--app-dir', missing, '--json'])).stdout)).toMatchObject({
      ok: false,
      errors: [expect.any(String)],
      warnings: [],
    });
    expect(oneDocument((await runAck(['catalog', 'check', '--app-dir', missing, '--json'])).stdout)).toMatchObject({
      ok: false,
      error: expect.stringMatching(/file not found/),
      exitCode: 2,
    });
  });
});

describe('ack dev-cert --json', () => {
  it('prints one document when it makes the certificate, when it keeps it, and when it cannot', async () => {
    const dir = workDir(cleanups, { 'home/app/appsettings.json': '{}', 'not-a-folder': 'x' });
    const appDir = path.join(dir, 'home', 'app');
    const keys = ['ok', 'created', 'cert', 'key', 'subjectAltName', 'validTo', 'fingerprint256'];
    const made = await runAck(['dev-cert', '--app-dir', appDir, '--json']);
    expect(made.code).toBe(0);
    const first = oneDocument(made.stdout);
    expect(Object.keys(first)).toEqual(keys);
    expect(first).toMatchObject({
      ok: true,
      created: true,
      cert: path.join(dir, 'home', '.ack', 'dev-cert', 'cert.pem'),
      subjectAltName: expect.stringMatching(/DNS:localhost/),
    });
    const kept = oneDocument((await runAck(['dev-cert', '--app-dir', appDir, '--json'])).stdout);
    expect(kept).toMatchObject({ ok: true, created: false, fingerprint256: first.fingerprint256 });
    // The home is a file: nothing can be written there.
    const failed = await runAck(['dev-cert', '--app-dir', path.join(dir, 'not-a-folder', 'app'), '--json']);
    expect(failed.code).toBe(1);
    const doc = oneDocument(failed.stdout);
    expect(doc).toMatchObject({ ok: false, created: false, cert: null, exitCode: 1, error: expect.any(String) });
    for (const key of keys) expect(doc).toHaveProperty(key);
  });
});

describe('ack contract-sync against a host with it off', () => {
  it('says so in one line', async () => {
    const h = await host({ UseContractSync: false });
    const dir = workDir(cleanups, { 'C.json': '{}' });
    const run = await runAck(
      ['contract-sync', path.join(dir, 'C.json'), '--module-id', 'HDS', '--type', 'transact', '--url', h.url],
      { env: { ...env, ACK_HOST_ACCESS_ID: 'k' } },
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      `ack: contract sync is off on that host (${h.url}; AppSettings:UseContractSync is false)\n`,
    );
  });
});

describe('ack sync upload --dry-run', () => {
  it('lists what would be sent and sends nothing (no token needed, no host contacted)', async () => {
    const h = await host();
    const dir = workDir(cleanups, { 'HDS/a.html': 'aaaa', 'HDS/sub/b.js': 'bb' });
    const before = tree(h.contracts);
    const run = await runAck(['sync', 'upload', dir, '--module', 'wwwroot', '--url', h.url, '--dry-run'], {
      env: { ...env, ACK_SYNC_TOKEN: '' },
    });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(
      `would upload HDS/a.html (4 bytes)\nwould upload HDS/sub/b.js (2 bytes)\ndry run: 2 files, 6 B, to ${h.url}; nothing was sent\n`,
    );
    expect(tree(h.contracts)).toEqual(before);
    const port = await freePort();
    const json = await runAck(
      ['sync', 'upload', dir, '--module', 'wwwroot', '--url', `http://127.0.0.1:${port}`, '--dry-run', '--json'],
      { env },
    );
    // A host that cannot be listed: every file is shown, and the run fails, as a push would.
    expect(json.code).toBe(1);
    expect(oneDocument(json.stdout)).toMatchObject({
      ok: false,
      dryRun: true,
      results: [
        { path: 'HDS/a.html', bytes: 4 },
        { path: 'HDS/sub/b.js', bytes: 2 },
      ],
    });
  });

  it('hints when a wwwroot path has no ApplicationID folder', async () => {
    const h = await host();
    const dir = workDir(cleanups, { 'page.html': 'p' });
    const run = await runAck(['sync', 'upload', path.join(dir, 'page.html'), '--module', 'wwwroot', '--url', h.url], {
      env,
    });
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(
      'hint: page.html would sit at the top of the wwwroot contract folder, which is not served',
    );
    expect(run.stderr).toContain('--path HDS/page.html');
    const nested = await runAck(
      ['sync', 'upload', path.join(dir, 'page.html'), '--module', 'wwwroot', '--path', 'HDS/page.html', '--url', h.url],
      { env },
    );
    expect(nested.stderr).toBe('');
    // A folder: its top-level files are at the top without a prefix, and under it with one.
    const folder = await runAck(['sync', 'upload', dir, '--module', 'wwwroot', '--url', h.url], { env });
    expect(folder.code).toBe(0);
    expect(folder.stderr).toContain('hint: page.html would sit at the top of the wwwroot contract folder');
    const prefixed = await runAck(['sync', 'upload', dir, '--module', 'wwwroot', '--path', 'HDS', '--url', h.url], {
      env,
    });
    expect(prefixed.code).toBe(0);
    // No hint; only the line saying the host has no releases (docs/sync.md "Releases").
    expect(prefixed.stderr).toBe(`ack: ${h.url} has no releases: pushing file by file\n`);
  });
});

/** Runs `ack ...args` under a pseudo-terminal (util-linux `script`), returning what the terminal saw. */
function onTerminal(args: string[], extraEnv: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string }> {
  const quoted = [process.execPath, ACK_BIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  return new Promise((resolve) => {
    execFile(
      'script',
      ['-qec', quoted, '/dev/null'],
      { env: { ...process.env, XDG_CACHE_HOME: testCacheHome(), ...extraEnv, TERM: 'xterm' }, timeout: 30_000 },
      (err, stdout) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: stdout });
      },
    );
  });
}

describe('upload progress', () => {
  it('shows files, bytes, rate and time left on a terminal, and nothing of it in a pipe', async () => {
    const h = await host();
    const files = Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`HDS/f${i}.bin`, Buffer.alloc(20_000, i)]));
    const dir = workDir(cleanups, files);
    const tty = await onTerminal(
      ['sync', 'upload', dir, '--module', 'wwwroot', '--url', h.url, '--concurrency', '1'],
      env,
    );
    expect(tty.code).toBe(0);
    expect(tty.out).toMatch(
      /\r\[[#-]{20}\] {2}\d\/6 files {2}[\d.]+ (B|KB) of 117\.2 KB {2}[\d.]+ (B|KB|MB)\/s {2}(\d+ s left|time left: -)/,
    );
    expect(tty.out).toMatch(/6\/6 files {2}117\.2 KB of 117\.2 KB/);
    expect(tty.out).toContain('6 files uploaded to');

    // New content for every file, so that the delta sends all six again (as changes).
    for (const name of Object.keys(files)) fs.writeFileSync(path.join(dir, name), Buffer.alloc(20_000, 0x40));
    const piped = await runAck(['sync', 'upload', dir, '--module', 'wwwroot', '--url', h.url], { env });
    expect(piped.code).toBe(0);
    expect(piped.stdout + piped.stderr).not.toMatch(/\r|files {2}|\/s {2}|left/);
    expect(piped.stdout.split('\n').filter((l) => l.startsWith('Changed HDS/'))).toHaveLength(6);
  });
});

describe('ack sync watch', () => {
  it('checks the credentials before watching, and exits 3 when they are refused', async () => {
    const h = await host();
    const dir = workDir(cleanups, { 'HDS/a.html': 'a' });
    const run = await runAck(['sync', 'watch', dir, '--module', 'wwwroot', '--url', h.url], {
      env: { ...env, ACK_SYNC_TOKEN: 'wrong' },
    });
    expect(run.code).toBe(3);
    expect(run.stdout).not.toContain('watching');
    expect(run.stderr).toMatch(/refused the credentials/);
    // With --json the failure is one more JSON line, like every watch event.
    const json = await runAck(['sync', 'watch', dir, '--module', 'wwwroot', '--url', h.url, '--json'], {
      env: { ...env, ACK_SYNC_TOKEN: 'wrong' },
    });
    expect(json.code).toBe(3);
    const lines = json.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      ok: false,
      event: 'failed',
      exitCode: 3,
      error: expect.stringMatching(/refused the credentials/),
    });
  });

  it('--initial pushes the folder first, then watches', async () => {
    const h = await host();
    const dir = workDir(cleanups, { 'HDS/a.html': 'first', 'HDS/sub/b.css': 'b{}' });
    const child = spawn(
      process.execPath,
      [ACK_BIN, 'sync', 'watch', dir, '--module', 'wwwroot', '--url', h.url, '--initial', '--debounce', '20'],
      {
        env: { ...process.env, XDG_CACHE_HOME: testCacheHome(), ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    cleanups.push(() => void child.kill('SIGKILL'));
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    const a = path.join(h.contracts, 'HDS', 'a.html');
    const b = path.join(h.contracts, 'HDS', 'sub', 'b.css');
    await waitFor(
      () =>
        fs.existsSync(a) &&
        fs.existsSync(b) &&
        out.includes('Created HDS/sub/b.css') &&
        out.includes('Created HDS/a.html') &&
        // The summary is written after the files' lines: waited for, not raced.
        /initial push: /.test(out),
      { timeout: 20_000, message: () => `the initial push of both files; output so far:\n${out}` },
    );
    expect(out).toMatch(/initial push: 2 files/);
    expect(fs.readFileSync(a, 'utf8')).toBe('first');
    child.kill('SIGINT');
    expect(await exited).toBe(0);
  });
});

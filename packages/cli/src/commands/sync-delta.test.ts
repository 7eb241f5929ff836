import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useCleanups } from '../test-support/cleanups.js';
import { testAppSettings, useTestHosts, waitFor, type TestHost } from '@ack/host/test-support';
import { wwwrootModule } from '@ack/wwwroot';
import { runAck, testCacheHome, watchAck } from '../test-support/spawn-ack.js';
import { workDir } from '../test-support/work.js';
import { digestCacheFile } from './remote/local-digests.js';

// The delta push (docs/sync.md "The delta") with the BUILT `ack` binary against real hosts.

const TOKEN = 'delta-cli-token';
const sha = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const env = { ACK_SYNC_TOKEN: TOKEN, ACK_URL: '' };
const hosts = useTestHosts();
const cleanups = useCleanups();

async function host(files: Record<string, string> = {}): Promise<TestHost & { contracts: string }> {
  const home = hosts.home(testAppSettings({ AppSettings: { LoadModules: ['wwwroot'] } }), {
    'modules/wwwroot/module.json': { ModuleID: 'wwwroot', ModuleConfig: { FileSyncTokens: [TOKEN] } },
    ...Object.fromEntries(Object.entries(files).map(([k, v]) => [`contracts/wwwroot/${k}`, v])),
  });
  const running = await hosts.start(home, { wwwroot: wwwrootModule });
  return { ...running, contracts: path.join(home.home, 'contracts', 'wwwroot') };
}

interface Doc {
  ok: boolean;
  hosts: Array<{ url: string; listed: boolean; created: number; changed: number; deleted: number; unchanged: number }>;
  results: Array<{ url: string; path: string; change: string; ok: boolean; sha256?: string; error?: string }>;
}

async function push(
  dir: string,
  url: string | string[],
  ...extra: string[]
): Promise<Doc & { code: number | null; stderr: string }> {
  const urls = (Array.isArray(url) ? url : [url]).flatMap((u) => ['--url', u]);
  const run = await runAck(
    ['sync', 'upload', dir, '--module', 'wwwroot', '--path', 'HDS', ...urls, '--json', ...extra],
    {
      env,
    },
  );
  return { ...(JSON.parse(run.stdout) as Doc), code: run.code, stderr: run.stderr };
}

const inode = (file: string) => fs.statSync(file).ino;

describe('ack sync upload <dir>: the delta', () => {
  it('sends nothing for an unchanged tree, then only what changed, and sees an edit made on the host', async () => {
    const h = await host();
    const dir = workDir(cleanups, { 'a.html': 'aaa', 'sub/b.js': 'bb', 'c.css': 'c' });
    const first = await push(dir, h.url);
    expect(first.code, JSON.stringify(first)).toBe(0);
    expect(first.hosts).toEqual([
      { url: h.url, listed: true, created: 3, changed: 0, deleted: 0, unchanged: 0, failed: 0 },
    ]);
    const before = inode(path.join(h.contracts, 'HDS', 'a.html'));

    const again = await runAck(['sync', 'upload', dir, '--module', 'wwwroot', '--path', 'HDS', '--url', h.url], {
      env,
    });
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(`nothing to send to ${h.url}: 3 files unchanged\n`);
    expect(inode(path.join(h.contracts, 'HDS', 'a.html'))).toBe(before); // not even rewritten

    fs.writeFileSync(path.join(dir, 'sub', 'b.js'), 'BB'); // same size, other bytes
    fs.writeFileSync(path.join(dir, 'new.txt'), 'n');
    const changed = await push(dir, h.url);
    expect(changed.hosts[0]).toMatchObject({ created: 1, changed: 1, unchanged: 2 });
    expect(changed.results.map((r) => [r.path, r.change, r.ok])).toEqual(
      expect.arrayContaining([
        ['HDS/new.txt', 'Created', true],
        ['HDS/sub/b.js', 'Changed', true],
      ]),
    );
    expect(changed.results).toHaveLength(2);
    expect(fs.readFileSync(path.join(h.contracts, 'HDS', 'sub', 'b.js'), 'utf8')).toBe('BB');

    // Someone edits the host's copy behind the CLI's back (same size): the digest tells.
    fs.writeFileSync(path.join(h.contracts, 'HDS', 'c.css'), 'X');
    const healed = await push(dir, h.url);
    expect(healed.hosts[0]).toMatchObject({ created: 0, changed: 1, unchanged: 3 });
    expect(healed.results.map((r) => r.path)).toEqual(['HDS/c.css']);
    expect(fs.readFileSync(path.join(h.contracts, 'HDS', 'c.css'), 'utf8')).toBe('c');
  });

  it('deletes what the folder lacks only with --delete, shows it with --dry-run, and never touches dotfiles or other prefixes', async () => {
    const h = await host({ 'HDS/keep.html': 'k', 'HDS/old/gone.js': 'g', 'HDS/.htaccess': 'x', 'OTHER/o.html': 'o' });
    const dir = workDir(cleanups, { 'keep.html': 'k', 'new.html': 'n' });
    const gone = path.join(h.contracts, 'HDS', 'old', 'gone.js');

    const dry = await runAck(
      ['sync', 'upload', dir, '--module', 'wwwroot', '--path', 'HDS', '--url', h.url, '--delete', '--dry-run'],
      { env },
    );
    expect(dry.code).toBe(0);
    expect(dry.stdout).toBe(
      `would create HDS/new.html (1 bytes)\nwould delete HDS/old/gone.js\n` +
        `dry run on ${h.url}: 1 to create, 0 to change, 1 to delete, 1 unchanged (1 B to send); nothing was sent\n`,
    );
    expect(fs.existsSync(gone)).toBe(true);
    expect(fs.existsSync(path.join(h.contracts, 'HDS', 'new.html'))).toBe(false);

    const without = await push(dir, h.url);
    expect(without.hosts[0]).toMatchObject({ created: 1, deleted: 0 });
    expect(fs.existsSync(gone)).toBe(true); // never without the flag

    const withDelete = await push(dir, h.url, '--delete');
    expect(withDelete.code).toBe(0);
    expect(withDelete.hosts[0]).toMatchObject({ created: 0, changed: 0, deleted: 1, unchanged: 2 });
    expect(withDelete.results).toMatchObject([{ path: 'HDS/old/gone.js', change: 'Deleted', ok: true }]);
    expect(fs.existsSync(gone)).toBe(false);
    expect(fs.readFileSync(path.join(h.contracts, 'HDS', '.htaccess'), 'utf8')).toBe('x');
    expect(fs.readFileSync(path.join(h.contracts, 'OTHER', 'o.html'), 'utf8')).toBe('o');
  });

  it('falls back to sending every file, one by one, to a host without the listing, and says so once', async () => {
    const received: string[] = [];
    const server = http.createServer((req, res) => {
      if (req.method === 'POST' && req.url === '/wwwroot/api/sync/upload') {
        let body = '';
        req.on('data', (d) => (body += d));
        req.on('end', () => {
          received.push(/name="filePath"\r\n\r\n([^\r]*)/.exec(body)?.[1] ?? '?');
          // As an older ack host answers: the sha256 of what it stored.
          const content = /filename="[^"]*"\r\n(?:[^\r]+\r\n)*\r\n([^]*?)\r\n--/.exec(body)?.[1] ?? '';
          res.setHeader('Content-Type', 'application/json');
          res.end(
            JSON.stringify({
              module: 'wwwroot',
              change: 'Changed',
              sha256: sha(content),
              refresh: { ok: true, via: 'cache' },
            }),
          );
        });
        return;
      }
      // It has the refresh route: a request without parameters is refused as bad input.
      res.statusCode = req.url?.startsWith('/wwwroot/api/sync/refresh') ? 400 : 404;
      res.end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise<void>((r) => server.close(() => r())));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const dir = workDir(cleanups, { 'a.html': 'a', 'b.html': 'b' });
    const run = await runAck(
      ['sync', 'upload', dir, '--module', 'wwwroot', '--path', 'HDS', '--url', url, '--delete'],
      {
        env,
      },
    );
    expect(run.stderr).toBe(
      `ack: ${url} cannot list its files (answered 404: an older host): sending every file; --delete is skipped there\n`,
    );
    expect(run.code).toBe(0);
    expect(received.sort()).toEqual(['HDS/a.html', 'HDS/b.html']);
    expect(run.stdout).toContain(`2 files uploaded to ${url} (0 created, 2 changed, 0 deleted, 0 unchanged)`);
  });

  it('refuses a bad token before sending anything (exit 3); the good token goes through', async () => {
    const h = await host();
    const dir = workDir(cleanups, { 'a.html': 'a' });
    const bad = await runAck(['sync', 'upload', dir, '--module', 'wwwroot', '--url', h.url], {
      env: { ...env, ACK_SYNC_TOKEN: 'wrong' },
    });
    expect(bad.code).toBe(3);
    expect(bad.stderr).not.toContain('wrong');
    expect(fs.existsSync(path.join(h.contracts, 'a.html'))).toBe(false);
    const good = await runAck(['sync', 'upload', dir, '--module', 'wwwroot', '--path', 'HDS', '--url', h.url], { env });
    expect(good.code).toBe(0);
  });
});

describe('ack sync upload <dir>: speed without less certainty', () => {
  it('keeps local digests between runs, still compares with the host, sees a same-size edit with its old time put back, and --rehash trusts nothing kept', async () => {
    const h = await host();
    const dir = workDir(cleanups, { 'a.html': 'aaa', 'b.html': 'bbb' });
    const cacheFile = digestCacheFile(dir, { XDG_CACHE_HOME: testCacheHome() });
    // The cache file (docs/sync.md "The local digest cache"): a first line ending with the number
    // of files, the bytes of their paths and of their listing, and the listing's base; then their
    // facts (32 bytes each), paths (a line each), digests (64 hex digits each), and their listing.
    const cache = () => {
      const data = fs.existsSync(cacheFile) ? fs.readFileSync(cacheFile) : Buffer.from('\n');
      const nl = data.indexOf(10);
      const [count = 0, pathsBytes = 0] = data.toString('utf8', 0, nl).split(' ').slice(-4, -2).map(Number);
      const pathsAt = nl + 1 + count * 32;
      const digestsAt = pathsAt + pathsBytes;
      const paths = data.toString('utf8', pathsAt, digestsAt).split('\n').slice(0, count);
      return { data, paths, digestAt: (rel: string) => digestsAt + paths.indexOf(rel) * 64 };
    };
    const kept = (rel: string) => {
      const { data, paths, digestAt } = cache();
      return paths.includes(rel) ? data.toString('latin1', digestAt(rel), digestAt(rel) + 64) : undefined;
    };
    /** Puts `digest` in place of the one kept for `rel`, in the digests and in the kept listing. */
    const plant = (rel: string, digest: string) => {
      const { data, digestAt } = cache();
      const old = kept(rel)!;
      data.write(digest, digestAt(rel), 'latin1');
      const text = data.toString('latin1');
      fs.writeFileSync(cacheFile, Buffer.from(text.replace(`"sha256":"${old}"`, `"sha256":"${digest}"`), 'latin1'));
    };

    expect((await push(dir, h.url)).hosts[0]).toMatchObject({ created: 2 });
    // Files written a moment ago are not kept: a coarse clock could hide an edit within the same tick.
    expect(cache().paths).toEqual([]);
    await new Promise((r) => setTimeout(r, 2100));
    expect((await push(dir, h.url)).hosts[0]).toMatchObject({ changed: 0, unchanged: 2 });
    expect(kept('b.html')).toBe(sha('bbb'));

    // While a file's size, times and inode match, its kept digest is believed (here a wrong one,
    // so the file is sent); what was sent, hashed on the way, replaces it.
    plant('b.html', sha('zzz'));
    const believed = await push(dir, h.url);
    expect(believed.code, JSON.stringify(believed)).toBe(0);
    expect(believed.hosts[0]).toMatchObject({ changed: 1, unchanged: 1 });
    expect(believed.results).toMatchObject([{ path: 'HDS/b.html', ok: true, sha256: sha('bbb') }]);
    expect(kept('b.html')).toBe(sha('bbb'));
    // --rehash reads every file again instead.
    plant('b.html', sha('zzz'));
    expect((await push(dir, h.url, '--rehash')).hosts[0]).toMatchObject({ changed: 0, unchanged: 2 });

    // The comparison is with the host's digests: an edit made there is still seen.
    fs.writeFileSync(path.join(h.contracts, 'HDS', 'a.html'), 'XXX');
    const healed = await push(dir, h.url);
    expect(healed.results.map((r) => [r.path, r.change, r.ok])).toEqual([['HDS/a.html', 'Changed', true]]);
    expect(fs.readFileSync(path.join(h.contracts, 'HDS', 'a.html'), 'utf8')).toBe('aaa');

    // A same-size local edit with its modification time put back still changes the change time.
    const b = path.join(dir, 'b.html');
    const { atime, mtime } = fs.statSync(b);
    fs.writeFileSync(b, 'BBB');
    fs.utimesSync(b, atime, mtime);
    const edited = await push(dir, h.url);
    expect(edited.results.map((r) => [r.path, r.change, r.ok])).toEqual([['HDS/b.html', 'Changed', true]]);
    expect(fs.readFileSync(path.join(h.contracts, 'HDS', 'b.html'), 'utf8')).toBe('BBB');
  });

  it('streams a file over 1 MiB on its own, checked against the digest of what went out', async () => {
    const h = await host();
    const big = Buffer.alloc(3 * 1024 * 1024 + 17, 'x');
    big.write('first bytes');
    big.write('last bytes', big.length - 10);
    const dir = workDir(cleanups, { 'small.html': 's' });
    fs.writeFileSync(path.join(dir, 'big.bin'), big);
    const run = await push(dir, h.url);
    expect(run.code, JSON.stringify(run)).toBe(0);
    expect(run.results.find((r) => r.path === 'HDS/big.bin')).toMatchObject({ ok: true, sha256: sha(big) });
    expect(fs.readFileSync(path.join(h.contracts, 'HDS', 'big.bin')).equals(big)).toBe(true);
    expect(fs.readFileSync(path.join(h.contracts, 'HDS', 'small.html'), 'utf8')).toBe('s');
  });

  it('counts a file the host refused as failed, not as created or changed, in the JSON and in the summary', async () => {
    const h = await host({ 'HDS/old.html': 'old' });
    // A line break is a legal file name here; the host refuses it in a path (a control character).
    const dir = workDir(cleanups, { 'a.html': 'a', 'old.html': 'new', 'bad\nname.html': 'x' });
    const doc = await push(dir, h.url);
    expect(doc.code).toBe(2);
    expect(doc.hosts[0]).toMatchObject({ created: 1, changed: 1, deleted: 0, unchanged: 0, failed: 1 });
    expect(doc.results.filter((r) => !r.ok).map((r) => r.path)).toEqual(['HDS/bad\nname.html']);
    fs.writeFileSync(path.join(dir, 'b.html'), 'b');
    const text = await runAck(['sync', 'upload', dir, '--module', 'wwwroot', '--path', 'HDS', '--url', h.url], { env });
    expect(text.code).toBe(2);
    expect(text.stdout).toContain(
      `1 file uploaded to ${h.url} (1 created, 0 changed, 0 deleted, 2 unchanged, 1 failed)`,
    );
    expect(text.stderr).toContain('sync.invalid_path');
    // Only the refused file left to send: a failure, not "nothing to send".
    const again = await runAck(['sync', 'upload', dir, '--module', 'wwwroot', '--path', 'HDS', '--url', h.url], {
      env,
    });
    expect(again.code).toBe(2);
    expect(again.stdout).toContain(
      `0 files uploaded to ${h.url} (0 created, 0 changed, 0 deleted, 3 unchanged, 1 failed)`,
    );
  });
});

describe('ack sync upload <dir>: long paths', () => {
  it('pushes and deletes 400 files whose paths are about 3 KiB each without a 413: their fields would pass 1 MiB in one batch', async () => {
    const h = await host();
    // Twelve folders of 240 characters: each path about 2.9 KiB, inside the 4,096 bytes of one field.
    const deep = Array.from({ length: 12 }, (_, i) => `${String.fromCharCode(97 + i)}`.repeat(240)).join('/');
    const files = Object.fromEntries(Array.from({ length: 400 }, (_, i) => [`${deep}/f${i}.txt`, `file ${i}`]));
    const dir = workDir(cleanups, files);
    const pushed = await push(dir, h.url);
    expect(pushed.stderr).toBe('');
    expect(pushed.code).toBe(0);
    expect(pushed.hosts[0]).toMatchObject({ created: 400, changed: 0 });
    expect(pushed.results.filter((r) => !r.ok)).toEqual([]);
    expect(fs.readFileSync(path.join(h.contracts, 'HDS', deep, 'f399.txt'), 'utf8')).toBe('file 399');

    // The same count of long paths to delete: `deletePath` fields, batched the same way.
    fs.rmSync(path.join(dir, 'a'.repeat(240)), { recursive: true });
    fs.writeFileSync(path.join(dir, 'keep.txt'), 'k');
    const deleted = await push(dir, h.url, '--delete');
    expect(deleted.code).toBe(0);
    expect(deleted.hosts[0]).toMatchObject({ created: 1, deleted: 400 });
    expect(deleted.results.filter((r) => !r.ok)).toEqual([]);
    expect(fs.existsSync(path.join(h.contracts, 'HDS', deep, 'f0.txt'))).toBe(false);
  }, 120_000);
});

describe('ack sync upload <dir>: failures', () => {
  it('fails alone a local name the host refuses (a control character), the rest of its batch landing; shows five failures per reason, counts the rest once; --json lists every file', async () => {
    const h = await host();
    const bad = Array.from({ length: 8 }, (_, i) => `bad\u0001${i}.html`);
    const dir = workDir(cleanups, { 'ok.html': 'ok', ...Object.fromEntries(bad.map((name) => [name, 'x'])) });
    const text = await runAck(['sync', 'upload', dir, '--module', 'wwwroot', '--path', 'HDS', '--url', h.url], { env });
    expect(text.code).toBe(2);
    const lines = text.stderr
      .trim()
      .split('\n')
      .filter((l) => l.startsWith('ack: '));
    expect(lines.filter((l) => l.includes('sync.invalid_path'))).toHaveLength(6);
    expect(lines.at(-1)).toMatch(/^ack: 3 more files: .*sync\.invalid_path.*\(--json lists every file\)$/);
    expect(text.stdout).toContain('(1 created, 0 changed, 0 deleted, 0 unchanged, 8 failed)');
    const doc = await push(dir, h.url);
    expect(doc.results.filter((r) => !r.ok)).toHaveLength(8);
  });
});

describe('ack sync watch --initial: the delta', () => {
  it('pushes only what differs to each host and reports counts per host', async () => {
    const one = await host({ 'HDS/same.html': 'same', 'HDS/diff.html': 'old' });
    const two = await host();
    // The host refuses a line break in a path: that file is counted failed, not created.
    const dir = workDir(cleanups, {
      'same.html': 'same',
      'diff.html': 'new',
      'add.html': 'add',
      'bad\nname.html': 'x',
    });
    const watching = watchAck(
      [dir, '--module', 'wwwroot', '--path', 'HDS', '--url', one.url, '--url', two.url, '--initial', '--json'],
      env,
    );
    const { child, exited } = watching;
    cleanups.push(() => void child.kill('SIGKILL'));
    const out = () => watching.output();
    await waitFor(() => out().includes('"event":"watching"'), {
      timeout: 20_000,
      message: () => `the initial push and the watch; output so far:\n${out()}`,
    });
    const events = out()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const initial = events.filter((e) => e.event === 'initial');
    expect(initial).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ url: one.url, created: 1, changed: 1, deleted: 0, unchanged: 1, failed: 1 }),
        expect.objectContaining({ url: two.url, created: 3, changed: 0, deleted: 0, unchanged: 0, failed: 1 }),
      ]),
    );
    expect(fs.readFileSync(path.join(one.contracts, 'HDS', 'diff.html'), 'utf8')).toBe('new');
    expect(fs.readFileSync(path.join(two.contracts, 'HDS', 'same.html'), 'utf8')).toBe('same');
    child.kill('SIGINT');
    expect(await exited).toBe(0);
  });
});

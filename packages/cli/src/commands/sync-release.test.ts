import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useCleanups } from '../test-support/cleanups.js';
import { testAppSettings, useTestHosts, type TestHost } from '@ack/host/test-support';
import { wwwrootModule } from '@ack/wwwroot';
import { runAck } from '../test-support/spawn-ack.js';
import { workDir } from '../test-support/work.js';

// Folder pushes as releases (docs/releases.md, docs/sync.md "Releases") with the BUILT `ack`
// binary against real hosts: stage everywhere, then one switch each; list; roll back; compare.

const TOKEN = 'release-cli-token';
const env = { ACK_SYNC_TOKEN: TOKEN, ACK_URL: '' };
const hosts = useTestHosts();
const cleanups = useCleanups();

async function host(
  files: Record<string, string> = {},
  releases = true,
): Promise<TestHost & { contracts: string; hds: string }> {
  const home = hosts.home(testAppSettings({ AppSettings: { LoadModules: ['wwwroot'] } }), {
    'modules/wwwroot/module.json': {
      ModuleID: 'wwwroot',
      ModuleConfig: { FileSyncTokens: [TOKEN], ...(releases ? { IsEnabledReleases: true } : {}) },
    },
    ...Object.fromEntries(Object.entries(files).map(([k, v]) => [`contracts/wwwroot/${k}`, v])),
  });
  const running = await hosts.start(home, { wwwroot: wwwrootModule });
  const contracts = path.join(home.home, 'contracts', 'wwwroot');
  return { ...running, contracts, hds: path.join(contracts, 'HDS') };
}

const ack = (args: string[]) => runAck(args, { env });
const upload = (dir: string, urls: string[], ...extra: string[]) =>
  ack(['sync', 'upload', dir, '--module', 'wwwroot', '--path', 'HDS/', ...urls.flatMap((u) => ['--url', u]), ...extra]);
const live = (h: { hds: string }) => (fs.lstatSync(h.hds).isSymbolicLink() ? fs.readlinkSync(h.hds) : 'a real folder');
const stagings = (h: { contracts: string }) => {
  const home = path.join(h.contracts, '.ack-releases', 'HDS');
  return fs.existsSync(home) ? fs.readdirSync(home).filter((n) => n.endsWith('.staging')) : [];
};
const read = (h: { hds: string }, rel: string) => fs.readFileSync(path.join(h.hds, rel), 'utf8');

/** A pass-through in front of a host that notes each request line. */
async function noting(h: TestHost): Promise<{ url: string; seen: string[] }> {
  const seen: string[] = [];
  const proxy = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    const out = http.request(new URL(req.url!, h.url), { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode!, answer.headers);
      answer.pipe(res);
    });
    req.pipe(out);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => proxy.close(() => resolve())));
  return { url: `http://127.0.0.1:${(proxy.address() as { port: number }).port}`, seen };
}

describe('ack sync upload DIR --path P/ as a release', () => {
  it('stages the delta and switches once; a second push of the same tree sends nothing; --delete removes in the stage', async () => {
    const h = await host({ 'HDS/keep.html': 'k', 'HDS/old.js': 'o' });
    const dir = workDir(cleanups, { 'keep.html': 'k', 'new.html': 'n', 'sub/a.css': 'a' });
    const first = await upload(dir, [h.url], '--delete');
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(
      new RegExp(`^released r-\\S+ on ${h.url}: 2 created, 0 changed, 1 deleted, 1 unchanged\\n$`),
    );
    expect(live(h)).toMatch(/^\.ack-releases\/HDS\/r-/);
    expect(read(h, 'new.html')).toBe('n');
    expect(read(h, 'sub/a.css')).toBe('a');
    expect(fs.existsSync(path.join(h.hds, 'old.js'))).toBe(false);
    expect(stagings(h)).toEqual([]);

    const again = await upload(dir, [h.url]);
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(`nothing to send to ${h.url}: 3 files unchanged\n`);

    // The listing of releases shows both: the adopted folder and the push, the push live.
    const list = await ack(['sync', 'releases', '--module', 'wwwroot', '--path', 'HDS/', '--url', h.url, '--json']);
    expect(list.code).toBe(0);
    const doc = JSON.parse(list.stdout) as {
      hosts: Array<{ releases: Array<{ id: string; live: boolean; files: number }> }>;
    };
    const releases = doc.hosts[0]!.releases;
    expect(releases.map((r) => [r.files, r.live])).toEqual([
      [3, true],
      [2, false],
    ]);
    const table = await ack(['sync', 'releases', '--module', 'wwwroot', '--path', 'HDS/', '--url', h.url]);
    expect(table.stdout.split('\n')[0]).toMatch(/^ID\s+TIME\s+BY\s+FILES\s+BYTES\s+DIGEST\s+LIVE$/);
    expect(table.stdout.split('\n')[1]).toMatch(new RegExp(`^${releases[0]!.id}\\s.*\\slive$`));

    // Rollback: the one before the live one, then forward again by id.
    const back = await ack(['sync', 'rollback', '--module', 'wwwroot', '--path', 'HDS/', '--url', h.url]);
    expect(back.code).toBe(0);
    expect(back.stdout).toBe(`${h.url}: ${releases[1]!.id} is live\n`);
    expect(read(h, 'old.js')).toBe('o');
    expect(fs.existsSync(path.join(h.hds, 'new.html'))).toBe(false);
    const forward = await ack([
      'sync',
      'rollback',
      '--module',
      'wwwroot',
      '--path',
      'HDS/',
      '--url',
      h.url,
      '--to',
      releases[0]!.id,
    ]);
    expect(forward.code).toBe(0);
    expect(read(h, 'new.html')).toBe('n');
    const unknown = await ack([
      'sync',
      'rollback',
      '--module',
      'wwwroot',
      '--path',
      'HDS/',
      '--url',
      h.url,
      '--to',
      'r-nope',
    ]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/release\.not_found/);
  });

  it('sends the stage its files in batches, prefix-relative; a file past 1 MiB alone', async () => {
    const h = await host({ 'HDS/old.js': 'o', 'HDS/keep.html': 'k' });
    const { url, seen } = await noting(h);
    const big = 'b'.repeat(1024 * 1024 + 1);
    const dir = workDir(cleanups, { 'keep.html': 'k', 'a.html': 'a', 'sub/b.css': 'b', 'big.bin': big });
    const r = await upload(dir, [url], '--delete');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^released r-\S+ on .*: 3 created, 0 changed, 1 deleted, 1 unchanged\n$/);
    const id = /released (r-\S+)/.exec(r.stdout)![1]!;
    const stage = new URLSearchParams({ release: id, path: 'HDS/' }).toString();
    const sends = seen.filter((l) => !l.includes('/releases?') && !l.startsWith('GET '));
    expect(sends.filter((l) => l.startsWith('POST /wwwroot/api/sync/batch')).sort()).toEqual([
      `POST /wwwroot/api/sync/batch?${stage}`,
      `POST /wwwroot/api/sync/batch?${stage}`,
    ]);
    expect(sends.filter((l) => l.includes('/file?'))).toEqual([
      `PUT /wwwroot/api/sync/releases/stage/${id}/file?${new URLSearchParams({ moduleName: 'wwwroot', path: 'HDS/', filePath: 'big.bin' })}`,
    ]);
    expect(read(h, 'a.html')).toBe('a');
    expect(read(h, 'sub/b.css')).toBe('b');
    expect(read(h, 'big.bin')).toBe(big);
    expect(fs.existsSync(path.join(h.hds, 'old.js'))).toBe(false);
  });

  it('a host without releases is listed once: the folder push asks for releases while it lists', async () => {
    const plain = await host({ 'HDS/a.html': 'a' }, false);
    const { url, seen } = await noting(plain);
    const dir = workDir(cleanups, { 'a.html': 'a', 'b.html': 'b' });
    const r = await upload(dir, [url]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(`ack: ${url} has no releases: pushing file by file\n`);
    expect(seen.filter((l) => l.startsWith('GET /wwwroot/api/sync/list'))).toHaveLength(1);
    expect(seen.filter((l) => l.startsWith('GET /wwwroot/api/sync/releases'))).toHaveLength(1);
    expect(fs.readFileSync(path.join(plain.hds, 'b.html'), 'utf8')).toBe('b');
  });

  it('a host without releases gets the file-by-file push, said in one line; --no-release forces it where releases exist', async () => {
    const plain = await host({}, false);
    const dir = workDir(cleanups, { 'a.html': 'a' });
    const r = await upload(dir, [plain.url]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(`ack: ${plain.url} has no releases: pushing file by file\n`);
    expect(r.stdout).toMatch(/1 file uploaded to/);
    expect(live(plain)).toBe('a real folder');

    const released = await host();
    const forced = await upload(dir, [released.url], '--no-release');
    expect(forced.code).toBe(0);
    expect(forced.stderr).toBe('');
    expect(live(released)).toBe('a real folder');
    expect(read(released, 'a.html')).toBe('a');
  });

  it('the one-file form still writes through to the live release', async () => {
    const h = await host({ 'HDS/a.html': 'a' });
    const dir = workDir(cleanups, { 'a.html': 'a', 'b.html': 'b' });
    expect((await upload(dir, [h.url])).code).toBe(0);
    const file = path.join(dir, 'b.html');
    fs.writeFileSync(file, 'B');
    const one = await ack(['sync', 'upload', file, '--module', 'wwwroot', '--path', 'HDS/', '--url', h.url]);
    expect(one.code).toBe(0);
    expect(read(h, 'b.html')).toBe('B');
  });
});

/** A pass-through in front of a host that notes the SHA-256 of each batch body sent to it. */
async function batchNoting(h: TestHost): Promise<{ url: string; batches: string[] }> {
  const batches: string[] = [];
  const proxy = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (req.method === 'POST' && req.url!.startsWith('/wwwroot/api/sync/batch'))
        batches.push(createHash('sha256').update(body).digest('hex'));
      const out = http.request(new URL(req.url!, h.url), { method: req.method, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      });
      out.end(body);
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => proxy.close(() => resolve())));
  return { url: `http://127.0.0.1:${(proxy.address() as { port: number }).port}`, batches };
}

describe('a fleet: stage on every host, then switch', () => {
  it('hosts that get the same files are sent the same batches, each built once (the same bytes)', async () => {
    const [a, b] = [await host(), await host()];
    const [pa, pb] = [await batchNoting(a), await batchNoting(b)];
    // Six files of 900 KB: two batches (4 MiB at most each), none sent alone (past 1 MiB).
    const files = Object.fromEntries(
      Array.from({ length: 6 }, (_, i) => [`f${i}.html`, String.fromCharCode(97 + i).repeat(900 * 1024)]),
    );
    const dir = workDir(cleanups, files);
    const r = await upload(dir, [pa.url, pb.url]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`released r-\\S+ on ${pa.url}: 6 created`));
    expect(r.stdout).toMatch(new RegExp(`released r-\\S+ on ${pb.url}: 6 created`));
    expect(pa.batches).toHaveLength(2);
    // Built once, each body went to both hosts: a body built per host has its own boundary.
    expect([...pb.batches].sort()).toEqual([...pa.batches].sort());
    for (const h of [a, b]) for (const [name, text] of Object.entries(files)) expect(read(h, name)).toBe(text);
  });

  it('switches every host when all staged', async () => {
    const [a, b] = [await host({ 'HDS/x.html': 'x' }), await host()];
    const dir = workDir(cleanups, { 'x.html': 'X', 'y.html': 'y' });
    const r = await upload(dir, [a.url, b.url]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`released r-\\S+ on ${a.url}: 1 created, 1 changed`));
    expect(r.stdout).toMatch(new RegExp(`released r-\\S+ on ${b.url}: 2 created, 0 changed`));
    for (const h of [a, b]) expect(read(h, 'x.html')).toBe('X');
    // One release id across the fleet: the hosts agree on files and on the live release.
    const id = /released (r-\S+) on/.exec(r.stdout)![1]!;
    expect(live(a)).toBe(`.ack-releases/HDS/${id}`);
    expect(live(b)).toBe(`.ack-releases/HDS/${id}`);
    const status = await ack(['sync', 'status', '--path', 'HDS/', '--url', a.url, '--url', b.url]);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(new RegExp(`^${a.url}: 2 files, sha256:\\S+, live ${id}$`, 'm'));
    // Rolled back on one host only: the live releases differ, and so do the files.
    expect((await ack(['sync', 'rollback', '--module', 'wwwroot', '--path', 'HDS/', '--url', a.url])).code).toBe(0);
    const drift = await ack(['sync', 'status', '--path', 'HDS/', '--url', a.url, '--url', b.url]);
    expect(drift.code).toBe(1);
    expect(drift.stdout).toMatch(new RegExp(`^differs live release HDS/: ${a.url} r-\\S+, ${b.url} ${id}$`, 'm'));
    expect(drift.stdout).toMatch(/^differs HDS\/x\.html: /m);
    // Without --path: every file and every release prefix's live release.
    const whole = await ack(['sync', 'status', '--url', a.url, '--url', b.url]);
    expect(whole.code).toBe(1);
    expect(whole.stdout).toMatch(new RegExp(`^${b.url}: 2 files, sha256:\\S+, live HDS/ ${id}$`, 'm'));
    expect(whole.stdout).toMatch(/^differs live release HDS\/: /m);
    // Back on one release with the same files: the hosts agree, with or without --path.
    expect(
      (await ack(['sync', 'rollback', '--module', 'wwwroot', '--path', 'HDS/', '--to', id, '--url', a.url])).code,
    ).toBe(0);
    const agree = await ack(['sync', 'status', '--url', a.url, '--url', b.url]);
    expect(agree.stdout).not.toMatch(/^differs/m);
    expect(agree.code).toBe(0);
  });

  it('status without --path tells apart two hosts whose files agree but whose live releases differ', async () => {
    const [a, b] = [await host({ 'HDS/x.html': 'x' }), await host({ 'HDS/x.html': 'x' })];
    const dir = workDir(cleanups, { 'x.html': 'same' });
    expect((await upload(dir, [a.url])).code).toBe(0);
    expect((await upload(dir, [b.url])).code).toBe(0);
    // The same bytes, two release ids: the files agree, the releases do not.
    const r = await ack(['sync', 'status', '--url', a.url, '--url', b.url]);
    expect(r.stdout).not.toMatch(/^differs HDS/m);
    expect(r.stdout).toMatch(/^differs live release HDS\/: /m);
    expect(r.code).toBe(1);
  });

  it('one host that cannot stage (releases off) means no host switches, and the staged one is discarded', async () => {
    const [a, b] = [await host({ 'HDS/x.html': 'x' }), await host({ 'HDS/x.html': 'x' }, false)];
    // a is already on a release; b is listed (it is), then refuses the stage.
    const dir = workDir(cleanups, { 'x.html': 'x', 'y.html': 'y' });
    expect((await upload(dir, [a.url])).code).toBe(0);
    const before = live(a);
    fs.writeFileSync(path.join(dir, 'x.html'), 'X');
    const r = await upload(dir, [a.url, b.url]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`${a.url}: discarded \\(r-`));
    expect(r.stderr).toMatch(new RegExp(`${b.url}: not staged: ${b.url} has no releases`));
    expect(r.stderr).toMatch(/no host switched/);
    expect(live(a)).toBe(before);
    expect(read(a, 'x.html')).toBe('x');
    expect(read(b, 'x.html')).toBe('x');
    expect(stagings(a)).toEqual([]);
  });

  it('one host down: nothing is staged or switched anywhere, exit 1; --dry-run across hosts also exits 1', async () => {
    const a = await host({ 'HDS/x.html': 'x' });
    const down = 'http://127.0.0.1:1';
    const dir = workDir(cleanups, { 'x.html': 'X' });
    const r = await upload(dir, [a.url, down], '--retries', '0');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/cannot reach http:\/\/127\.0\.0\.1:1/);
    expect(read(a, 'x.html')).toBe('x');
    expect(stagings(a)).toEqual([]);
    const dry = await upload(dir, [a.url, down], '--dry-run');
    expect(dry.code).toBe(1);
    const dryOne = await upload(dir, [a.url], '--dry-run');
    expect(dryOne.code).toBe(0);
  });
});

describe('ack sync status', () => {
  it('exits 0 when the hosts hold the same files, 1 naming the path after a hand edit on one host', async () => {
    const files = { 'HDS/a.html': 'a', 'HDS/b.html': 'b' };
    const [a, b] = [await host(files, false), await host(files, false)];
    const same = await ack(['sync', 'status', '--url', a.url, '--url', b.url]);
    expect(same.code).toBe(0);
    expect(same.stdout).toMatch(/2 hosts hold the same files\n$/);
    fs.writeFileSync(path.join(b.hds, 'b.html'), 'B'); // same size, other bytes
    fs.writeFileSync(path.join(a.hds, 'only-a.html'), 'z');
    const drift = await ack(['sync', 'status', '--url', a.url, '--url', b.url, '--json']);
    expect(drift.code).toBe(1);
    const doc = JSON.parse(drift.stdout) as {
      drift: boolean;
      differences: Array<{ path: string; hosts: Record<string, string | null> }>;
    };
    expect(doc.drift).toBe(true);
    expect(doc.differences.map((d) => d.path)).toEqual(['HDS/b.html', 'HDS/only-a.html']);
    expect(doc.differences[1]!.hosts[b.url]).toBeNull();
    const down = await ack(['sync', 'status', '--url', a.url, '--url', 'http://127.0.0.1:1', '--retries', '0']);
    expect(down.code).toBe(1);
  });
});

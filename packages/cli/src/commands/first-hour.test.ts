import http from 'node:http';
import type net from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useCleanups } from '../test-support/cleanups.js';
import { testAppSettings, useTestHosts } from '@ack/host/test-support';
import { wwwrootModule } from '@ack/wwwroot';
import { runAck } from '../test-support/spawn-ack.js';
import { workDir } from '../test-support/work.js';

// What a first-time user reads when a sync command meets a slip: a mistyped module or URL, a URL
// that is not an ack host, a new file. The BUILT `ack` binary (`pnpm build` first), as users run it.

const TOKEN = 'first-hour-token';
const env = { ACK_SYNC_TOKEN: TOKEN, ACK_URL: '', ACK_HOST_ACCESS_ID: '' };
const hosts = useTestHosts();
const cleanups = useCleanups();

async function syncHost() {
  const home = hosts.home(testAppSettings({ AppSettings: { LoadModules: ['wwwroot'] } }), {
    'modules/wwwroot/module.json': { ModuleID: 'wwwroot', ModuleConfig: { FileSyncTokens: [TOKEN] } },
  });
  return hosts.start(home, { wwwroot: wwwrootModule });
}

/** A plain web server on 127.0.0.1: `answer` for each request; the request lines seen. */
async function server(answer: (req: http.IncomingMessage, res: http.ServerResponse) => void) {
  const seen: string[] = [];
  const s = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url?.split('?')[0]}`);
    req.resume();
    req.on('end', () => answer(req, res));
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise<void>((r) => s.close(() => r())));
  return { url: `http://127.0.0.1:${(s.address() as net.AddressInfo).port}`, seen };
}

const NGINX_404 =
  '<html>\r\n<head><title>404 Not Found</title></head>\r\n<body>\r\n<center><h1>404 Not Found</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n';

describe('a --url that is not an ack host', () => {
  it('a folder push stops with one line naming the URL, without the page or a line per file (exit 1)', async () => {
    const other = await server((_req, res) => {
      res.writeHead(404, { 'Content-Type': 'text/html' }).end(NGINX_404);
    });
    const dir = workDir(cleanups, { 'a.html': 'a', 'b.html': 'b', 'c/d.html': 'd' });
    const run = await runAck(
      ['sync', 'upload', dir, '--module', 'wwwroot', '--path', 'HDS', '--url', other.url, '--retries', '0'],
      { env },
    );
    expect(run.code).toBe(1);
    const lines = run.stderr.trim().split('\n');
    expect(lines).toEqual([
      `ack: ${other.url} does not take sync pushes (GET /wwwroot/api/sync/list and /wwwroot/api/sync/refresh answered 404 and 404): it is not an ack host, or has no wwwroot module; check --url`,
    ]);
    expect(run.stdout + run.stderr).not.toMatch(/<html|nginx/i);
    // Nothing was sent as a file.
    expect(other.seen.filter((l) => l.startsWith('POST') || l.startsWith('PUT'))).toEqual([]);
  });

  it('a single file: its one failure line names an HTML page, never pastes it', async () => {
    const other = await server((_req, res) => {
      res.writeHead(404, { 'Content-Type': 'text/html' }).end(NGINX_404);
    });
    const dir = workDir(cleanups, { 'a.html': 'a' });
    const run = await runAck(
      ['sync', 'upload', path.join(dir, 'a.html'), '--module', 'wwwroot', '--url', other.url, '--retries', '0'],
      { env },
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`ack: a.html: ${other.url} answered 404 (an HTML page: is this an ack host?)`);
    expect(run.stdout + run.stderr).not.toMatch(/<html|nginx|<center/i);
  });

  it('its neighbour, a host that speaks the sync wire without the listing (an older ack, the original), gets every file', async () => {
    const uploads: string[] = [];
    const older = await server((req, res) => {
      if (req.url?.startsWith('/wwwroot/api/sync/refresh'))
        res.writeHead(400, { 'Content-Type': 'text/plain' }).end('moduleName is required');
      else if (req.method === 'POST' && req.url === '/wwwroot/api/sync/upload') {
        uploads.push('file');
        res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok');
      } else res.writeHead(404).end();
    });
    const dir = workDir(cleanups, { 'a.html': 'a', 'b.html': 'b' });
    const run = await runAck(['sync', 'upload', dir, '--module', 'wwwroot', '--url', older.url, '--retries', '0'], {
      env,
    });
    expect(run.stderr).toContain(
      `${older.url} cannot list its files (answered 404: an older host): sending every file`,
    );
    expect(uploads).toHaveLength(2);
  });
});

describe('slips caught before anything is sent (exit 2)', () => {
  it('--module wwwrot: did you mean wwwroot; a name far from any: the list alone', async () => {
    const dir = workDir(cleanups, { 'a.html': 'a' });
    const near = await runAck(['sync', 'upload', dir, '--module', 'wwwrot', '--url', 'http://127.0.0.1:9'], { env });
    expect(near.code).toBe(2);
    expect(near.stderr.trim().split('\n')).toHaveLength(1);
    expect(near.stderr).toMatch(
      /^ack: .*'wwwrot' is invalid\. Did you mean wwwroot\? It is one of wwwroot, transact, /,
    );
    const far = await runAck(['sync', 'upload', dir, '--module', 'spreadsheets', '--dry-run'], { env });
    expect(far.code).toBe(2);
    expect(far.stderr).not.toContain('Did you mean');
    expect(far.stderr).toContain('It is one of wwwroot, transact, dbclient');
    const type = await runAck(['contract-sync', path.join(dir, 'a.html'), '--module-id', 'm', '--type', 'fuction'], {
      env: { ...env, ACK_HOST_ACCESS_ID: 'x' },
    });
    expect(type.code).toBe(2);
    expect(type.stderr).toContain('Did you mean function?');
  });

  it('its neighbour: --module WWWROOT (any case, as the host takes it) goes on to a dry run', async () => {
    const dir = workDir(cleanups, { 'a.html': 'a' });
    const run = await runAck(
      ['sync', 'upload', dir, '--module', 'WWWROOT', '--dry-run', '--url', 'http://127.0.0.1:9'],
      {
        env: { ...env, ACK_SYNC_TOKEN: '' },
      },
    );
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('would upload a.html (1 bytes)');
  });

  it('--url 127.0.0.1:8421 or localhost:8421 (no scheme): did you mean http://...; an ftp URL is only refused', async () => {
    for (const url of ['127.0.0.1:8421', 'localhost:8421']) {
      const run = await runAck(['manifest', '--url', url], { env });
      expect(run.code, url).toBe(2);
      expect(run.stderr.trim(), url).toMatch(
        new RegExp(`^ack: not a(n http\\(s\\))? URL: ${url} \\(did you mean http://${url}\\?\\)$`),
      );
    }
    const ftp = await runAck(['manifest', '--url', 'ftp://127.0.0.1:21'], { env });
    expect(ftp.code).toBe(2);
    expect(ftp.stderr.trim()).toBe('ack: not an http(s) URL: ftp://127.0.0.1:21');
  });
});

describe('what the host did', () => {
  it('a new single file is Created, the same file sent again is Changed, as a folder push says', async () => {
    const h = await syncHost();
    const dir = workDir(cleanups, { 'page.html': '<p>one</p>', 'folder/page.html': '<p>two</p>' });
    const args = ['--module', 'wwwroot', '--url', h.url];
    const first = await runAck(['sync', 'upload', path.join(dir, 'page.html'), ...args], { env });
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('Created page.html (10 bytes)');
    const again = await runAck(['sync', 'upload', path.join(dir, 'page.html'), ...args], { env });
    expect(again.stdout).toContain('Changed page.html (10 bytes)');
    const folder = await runAck(['sync', 'upload', path.join(dir, 'folder'), ...args, '--path', 'other'], { env });
    expect(folder.stdout).toContain('Created other/page.html (10 bytes)');
  });
});

describe('help texts say what the commands do', () => {
  it('sync watch --json prints JSON lines; manifest --url reads several hosts', async () => {
    const watch = await runAck(['sync', 'watch', '--help']);
    expect(watch.stdout).toMatch(/--json\s+print one JSON line per event \(JSON lines\)/);
    expect(watch.stdout).not.toContain('one JSON document');
    const upload = await runAck(['sync', 'upload', '--help']);
    expect(upload.stdout).toContain('print one JSON document');
    const manifest = await runAck(['manifest', '--help']);
    expect(manifest.stdout.replace(/\s+/g, ' ')).toContain('to read the manifests of several hosts');
    expect(manifest.stdout).not.toContain('push');
  });
});

describe('a body over a limit', () => {
  it('names the setting: Kestrel:Limits:MaxRequestBodySize for the body, Security:MaxContractSyncFileBytes for a contract file (exit 2); a file under both goes', async () => {
    const home = hosts.home(
      testAppSettings({
        AppSettings: {
          LoadModules: ['wwwroot'],
          UseContractSync: true,
          HostAccessID: 'first-hour-key',
          Security: { MaxContractSyncFileBytes: 2048 },
        },
        Kestrel: { Limits: { MaxRequestBodySize: 4096 } },
      }),
      { 'modules/wwwroot/module.json': { ModuleID: 'wwwroot', ModuleConfig: { FileSyncTokens: [TOKEN] } } },
    );
    const h = await hosts.start(home, { wwwroot: wwwrootModule });
    const dir = workDir(cleanups, { 'big.html': 'x'.repeat(8192), 'mid.html': 'x'.repeat(3000), 'small.html': 'x' });
    const upload = (file: string) =>
      runAck(['sync', 'upload', path.join(dir, file), '--module', 'wwwroot', '--path', `HDS/${file}`, '--url', h.url], {
        env,
      });
    const big = await upload('big.html');
    expect(big.code).toBe(2);
    expect(big.stderr).toContain(
      `ack: HDS/big.html: ${h.url} answered 413 (request.body_too_large: The request body is over 4096 bytes (Kestrel:Limits:MaxRequestBodySize).)`,
    );
    const small = await upload('small.html');
    expect(small.code).toBe(0);
    const contract = await runAck(
      ['contract-sync', path.join(dir, 'mid.html'), '--module-id', 'HDS', '--type', 'wwwroot', '--url', h.url],
      { env: { ...env, ACK_HOST_ACCESS_ID: 'first-hour-key' } },
    );
    expect(contract.code).toBe(2);
    expect(contract.stderr).toContain('The file is over 2048 bytes (Security:MaxContractSyncFileBytes).');
  });
});

import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useCleanups } from '../test-support/cleanups.js';
import { testAppSettings, useTestHosts } from '@ack/host/test-support';
import { wwwrootModule } from '@ack/wwwroot';
import { runAck } from '../test-support/spawn-ack.js';
import { workDir } from '../test-support/work.js';

// A big file as the whole body of a PUT (docs/sync.md "One big file"), with the BUILT `ack` binary:
// against a host that takes it, and against hosts that do not (an older ack, the original host),
// which get the multipart form as before.

const TOKEN = 'put-cli-token';
const sha = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const env = { ACK_SYNC_TOKEN: TOKEN, ACK_URL: '' };
const hosts = useTestHosts();
const cleanups = useCleanups();

/** A file just over the size that goes as a PUT, its first and last bytes marked. */
function bigFile(size = 3 * 1024 * 1024 + 17, fill = 'x'): Buffer {
  const big = Buffer.alloc(size, fill);
  big.write('first bytes');
  big.write('last bytes', big.length - 10);
  return big;
}

async function listen(server: net.Server): Promise<number> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise<void>((r) => server.close(() => r())));
  return (server.address() as net.AddressInfo).port;
}

/** A relay in front of `port` that notes the request line of every request that passes. */
async function recordingRelay(port: number): Promise<{ url: string; requests: string[] }> {
  const requests: string[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(port, '127.0.0.1');
    sockets.add(client).add(upstream);
    let seen = '';
    client.on('data', (chunk: Buffer) => {
      // Request lines: only the bodies' first bytes are read (the files here are all 'x' after them).
      seen = (seen + chunk.subarray(0, 4096).toString('latin1')).slice(-8192);
      for (const m of seen.matchAll(/(?:^|\r\n)((?:GET|POST|PUT) \S+) HTTP\/1\.1\r\n/g)) requests.push(m[1]!);
      seen = seen.slice(seen.lastIndexOf('HTTP/1.1\r\n') + 1);
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    for (const [a, b] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      a.on('error', () => b.destroy());
      a.on('close', () => b.destroy());
    }
  });
  const relayPort = await listen(server);
  cleanups.push(() => sockets.forEach((s) => s.destroy()));
  return { url: `http://127.0.0.1:${relayPort}`, requests };
}

/**
 * A host as an older one answers: a PUT with `putStatus` (404: an older ack; 405: the original
 * host), the multipart form as it always did (the sha256 of what it stored), no listing.
 */
async function olderHost(putStatus: number) {
  const puts: string[] = [];
  const stored = new Map<string, Buffer>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => {
      if (req.method === 'PUT') {
        puts.push(req.url ?? '');
        res.statusCode = putStatus;
        return void res.end();
      }
      if (req.method !== 'POST' || req.url !== '/wwwroot/api/sync/upload') {
        // It has the refresh route (a request without parameters is bad input), not the listing.
        res.statusCode = req.url?.startsWith('/wwwroot/api/sync/refresh') ? 400 : 404;
        return void res.end();
      }
      const body = Buffer.concat(chunks).toString('latin1');
      const filePath = /name="filePath"\r\n\r\n([^\r]*)/.exec(body)?.[1] ?? '?';
      const content = Buffer.from(
        /filename="[^"]*"\r\n(?:[^\r]+\r\n)*\r\n([^]*?)\r\n--/.exec(body)?.[1] ?? '',
        'latin1',
      );
      stored.set(filePath, content);
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ module: 'wwwroot', change: 'Changed', sha256: sha(content), refresh: { ok: true } }));
    });
  });
  const url = `http://127.0.0.1:${await listen(server)}`;
  return { url, puts, stored };
}

describe('ack sync upload: one big file as the body of a PUT', () => {
  it('sends a file over 1 MiB as a PUT, checked against the digest of what went out; a smaller one as the form', async () => {
    const home = hosts.home(testAppSettings({ AppSettings: { LoadModules: ['wwwroot'] } }), {
      'modules/wwwroot/module.json': { ModuleID: 'wwwroot', ModuleConfig: { FileSyncTokens: [TOKEN] } },
    });
    const host = await hosts.start(home, { wwwroot: wwwrootModule });
    const relay = await recordingRelay(Number(new URL(host.url).port));
    const big = bigFile();
    const small = Buffer.alloc(1024 * 1024, 's');
    const dir = workDir(cleanups, {});
    fs.writeFileSync(path.join(dir, 'big.bin'), big);
    fs.writeFileSync(path.join(dir, 'small.bin'), small);
    for (const [name, data] of [
      ['big.bin', big],
      ['small.bin', small],
    ] as const) {
      const run = await runAck(
        [
          'sync',
          'upload',
          path.join(dir, name),
          '--module',
          'wwwroot',
          '--path',
          `HDS/${name}`,
          '--url',
          relay.url,
          '--json',
        ],
        { env },
      );
      expect(run.code, run.stderr).toBe(0);
      expect(JSON.parse(run.stdout).results).toMatchObject([{ ok: true, path: `HDS/${name}` }]);
      expect(fs.readFileSync(path.join(home.home, 'contracts', 'wwwroot', 'HDS', name)).equals(data)).toBe(true);
    }
    expect(relay.requests).toEqual([
      `PUT /wwwroot/api/sync/upload?moduleName=wwwroot&changeType=Changed&filePath=HDS%2Fbig.bin`,
      'POST /wwwroot/api/sync/upload',
    ]);
  });

  it.each([404, 405])(
    'falls back to the form against a host that answers the PUT %i, once per run, storing every byte',
    async (status) => {
      const older = await olderHost(status);
      const big = bigFile();
      const other = bigFile(2 * 1024 * 1024, 'y');
      const dir = workDir(cleanups, {});
      fs.writeFileSync(path.join(dir, 'big.bin'), big);
      fs.writeFileSync(path.join(dir, 'other.bin'), other);
      // A folder: one request per file (the host has no listing), one at a time: the second file
      // goes as the form at once.
      const run = await runAck(
        ['sync', 'upload', dir, '--module', 'wwwroot', '--path', 'HDS', '--url', older.url, '--concurrency', '1'],
        { env },
      );
      expect(run.code, run.stderr).toBe(0);
      expect(older.puts).toHaveLength(1);
      expect(older.stored.get('HDS/big.bin')?.equals(big)).toBe(true);
      expect(older.stored.get('HDS/other.bin')?.equals(other)).toBe(true);
    },
  );

  it('stops sending the PUT body once the host has answered it, and sends the form', async () => {
    // As Express answers a route it does not have: at once, without reading the body.
    let putBytes = 0;
    let formBytes = 0;
    const server = http.createServer((req, res) => {
      if (req.method === 'PUT') {
        req.on('data', (d: Buffer) => (putBytes += d.length));
        res.statusCode = 405;
        return void res.end();
      }
      const chunks: Buffer[] = [];
      req.on('data', (d: Buffer) => {
        formBytes += d.length;
        chunks.push(d);
      });
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('latin1');
        const start = body.indexOf('\r\n\r\n', body.indexOf('filename=')) + 4;
        const content = Buffer.from(body.slice(start, body.lastIndexOf('\r\n--')), 'latin1');
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify({ module: 'wwwroot', change: 'Changed', sha256: sha(content) }));
      });
    });
    const url = `http://127.0.0.1:${await listen(server)}`;
    const dir = workDir(cleanups, {});
    const big = bigFile(48 * 1024 * 1024);
    fs.writeFileSync(path.join(dir, 'big.bin'), big);
    const run = await runAck(
      ['sync', 'upload', path.join(dir, 'big.bin'), '--module', 'wwwroot', '--path', 'HDS/big.bin', '--url', url],
      { env },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(formBytes).toBeGreaterThan(big.length);
    expect(putBytes).toBeLessThan(big.length / 2);
  });

  it('fails loudly when the answer to a PUT names another digest than what went out', async () => {
    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify({ module: 'wwwroot', change: 'Changed', sha256: sha('something else') }));
      });
    });
    const url = `http://127.0.0.1:${await listen(server)}`;
    const dir = workDir(cleanups, {});
    fs.writeFileSync(path.join(dir, 'big.bin'), bigFile());
    const run = await runAck(
      ['sync', 'upload', path.join(dir, 'big.bin'), '--module', 'wwwroot', '--path', 'HDS/big.bin', '--url', url],
      { env },
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`sha256 mismatch: the host stored ${sha('something else')}`);
  });
});

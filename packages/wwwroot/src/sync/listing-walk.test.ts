import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import http2 from 'node:http2';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { testAppSettings, useTestHosts } from '@ack/host/test-support';
import { wwwrootModule } from '../index.js';
import { basicAuth } from '../test-support/test-fixture.js';
import { walkContained } from './listing.js';

// The listing's walk and its stream (docs/sync.md "The listing"): what it enters and what it
// leaves out, how it cuts a big folder, the order of lines when some come from the cache and some
// are hashed, and a client that reads slowly. Over real sockets, and the walk on its own.

const TOKEN = 'listing-walk-token';
const AUTH = { Authorization: basicAuth(TOKEN) };
const sha = (data: string) => createHash('sha256').update(data).digest('hex');
const hosts = useTestHosts();
let scratch: string | undefined;
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  scratch = undefined;
});

async function start(files: Record<string, string>) {
  const home = hosts.home(testAppSettings({ AppSettings: { LoadModules: ['wwwroot'] } }), {
    'modules/wwwroot/module.json': { ModuleID: 'wwwroot', ModuleConfig: { FileSyncTokens: [TOKEN] } },
    ...Object.fromEntries(Object.entries(files).map(([k, v]) => [`contracts/wwwroot/${k}`, v])),
  });
  const { url, host } = await hosts.start(home, { wwwroot: wwwrootModule }, {}, { tlsPort: 0 });
  const at = (...parts: string[]) => path.join(home.home, 'contracts', 'wwwroot', ...parts);
  const list = async (query: string) => {
    const res = await fetch(`${url}/wwwroot/api/sync/list?${query}`, { headers: AUTH });
    const text = await res.text();
    const lines = text
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    return { res, text, done: lines.pop()!, entries: lines };
  };
  return { url, tlsUrl: host.tlsUrl!, at, list };
}

describe('the listing walk', () => {
  it('lists regular files only (a socket file left out), a prefix that is a link to a folder inside, and no temporary file named as prefix', async () => {
    const h = await start({ 'HDS/in/a.html': 'a', 'HDS/in/b.html': 'b', 'HDS/z.html': 'z' });
    // A socket file: neither a file nor a link, so not listed.
    const socket = net.createServer();
    await new Promise<void>((resolve) => socket.listen(h.at('HDS', 'in', 'pipe'), resolve));
    closers.push(() => new Promise<void>((resolve) => socket.close(() => resolve())));
    fs.symlinkSync(h.at('HDS', 'in'), h.at('HDS', 'alias'));
    fs.writeFileSync(h.at('HDS', '.z.html.0a1b2c3d4e5f1.ack-tmp'), 'half');
    fs.symlinkSync(h.at('HDS', 'gone.html'), h.at('HDS', 'dangling.html')); // a link to nothing: left out
    const all = await h.list('moduleName=wwwroot');
    expect(all.res.status).toBe(200);
    expect(all.res.headers.get('cache-control')).toBe('no-store');
    expect(all.entries.map((e) => e.path)).toEqual(['HDS/in/a.html', 'HDS/in/b.html', 'HDS/z.html']);
    expect(all.done).toMatchObject({ done: true, files: 3, bytes: 3, module: 'wwwroot', prefix: '' });
    const alias = await h.list('moduleName=wwwroot&prefix=HDS/alias');
    expect(alias.entries).toEqual([
      { path: 'HDS/alias/a.html', size: 1, sha256: sha('a') },
      { path: 'HDS/alias/b.html', size: 1, sha256: sha('b') },
    ]);
    expect(alias.done).toMatchObject({ files: 2, prefix: 'HDS/alias' });
    const temp = await h.list('moduleName=wwwroot&prefix=HDS/.z.html.0a1b2c3d4e5f1.ack-tmp');
    expect(temp.entries).toEqual([]);
    const pipe = await h.list('moduleName=wwwroot&prefix=HDS/in/pipe');
    expect(pipe.entries).toEqual([]);
    // A module whose folder does not exist lists nothing, whole.
    const none = await h.list('moduleName=transact');
    expect(none.entries).toEqual([]);
    expect(none.done).toMatchObject({ done: true, files: 0, bytes: 0 });
  });

  it('keeps the order when lines from the cache and new digests mix', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 40; i += 2) files[`HDS/f${String(i).padStart(2, '0')}.txt`] = `old ${i}`;
    const h = await start(files);
    await h.list('moduleName=wwwroot'); // every digest cached
    for (let i = 1; i < 40; i += 2) fs.writeFileSync(h.at('HDS', `f${String(i).padStart(2, '0')}.txt`), `new ${i}`);
    fs.writeFileSync(h.at('HDS', 'f10.txt'), 'changed 10');
    fs.utimesSync(h.at('HDS', 'f10.txt'), new Date(), new Date(Date.now() + 5000));
    const again = await h.list('moduleName=wwwroot');
    const expected = Array.from({ length: 40 }, (_, i) => {
      const name = `HDS/f${String(i).padStart(2, '0')}.txt`;
      const content = i === 10 ? 'changed 10' : i % 2 ? `new ${i}` : `old ${i}`;
      return { path: name, size: content.length, sha256: sha(content) };
    });
    expect(again.entries).toEqual(expected);
    expect(again.done).toMatchObject({ files: 40, bytes: expected.reduce((n, e) => n + e.size, 0) });
  });

  it('streams a listing of many chunks whole to a client that reads slowly', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 1200; i++) files[`HDS/${'long-name-'.repeat(8)}${String(i).padStart(4, '0')}.txt`] = `${i}`;
    const h = await start(files);
    const text = await new Promise<string>((resolve, reject) => {
      const req = http.get(`${h.url}/wwwroot/api/sync/list?moduleName=wwwroot`, { headers: AUTH }, (res) => {
        const chunks: Buffer[] = [];
        let paused = false;
        res.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          // Reads a chunk, then stops a while: the host must wait for the client, not drop lines.
          if (paused) return;
          paused = true;
          res.pause();
          setTimeout(() => res.resume(), 300);
        });
        res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
        res.on('error', reject);
      });
      req.on('error', reject);
    });
    expect(text.length).toBeGreaterThan(2 * 64 * 1024);
    const lines = text.trim().split('\n');
    expect(JSON.parse(lines.pop()!)).toMatchObject({ done: true, files: 1200 });
    expect(lines).toHaveLength(1200);
    expect((JSON.parse(lines[1199]!) as { path: string }).path).toMatch(/1199\.txt$/);
  });

  it('waits for an HTTP/2 client whose stream window is full, then sends the rest of the listing', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 1200; i++) files[`HDS/${'long-name-'.repeat(8)}${String(i).padStart(4, '0')}.txt`] = `${i}`;
    const h = await start(files);
    const session = http2.connect(h.tlsUrl, { rejectUnauthorized: false });
    try {
      const text = await new Promise<string>((resolve, reject) => {
        const stream = session.request({ ':path': '/wwwroot/api/sync/list?moduleName=wwwroot', ...AUTH });
        const chunks: Buffer[] = [];
        stream.on('error', reject);
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
        // Not read for a while: the window (64 KiB) fills and the host must wait, then go on.
        stream.pause();
        setTimeout(() => stream.resume(), 300);
      });
      const lines = text.trim().split('\n');
      expect(JSON.parse(lines.pop()!)).toMatchObject({ done: true, files: 1200 });
      expect(lines).toHaveLength(1200);
    } finally {
      session.close();
    }
  });

  it('cuts a big folder into slices of at most 256 files, in name order, with their facts', async () => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-walk-'));
    const root = path.join(scratch, 'root');
    fs.mkdirSync(path.join(root, 'big'), { recursive: true });
    for (let i = 0; i < 600; i++)
      fs.writeFileSync(path.join(root, 'big', `f${String(i).padStart(3, '0')}`), 'x'.repeat(i));
    fs.mkdirSync(path.join(root, 'big', 'f300d'));
    fs.writeFileSync(path.join(root, 'big', 'f300d', 'in'), 'in');
    const slices = [];
    for await (const slice of walkContained(root, root)) slices.push(slice);
    expect(slices.every((s) => s.names.length <= 256 && s.names.length === s.stats.length)).toBe(true);
    const listed = slices.flatMap((s) => s.names.map((n, i) => [`${s.base}${n}`, Number(s.stats[i]!.size)] as const));
    const expected: Array<readonly [string, number]> = [];
    for (let i = 0; i < 600; i++) {
      expected.push([`big/f${String(i).padStart(3, '0')}`, i]);
      if (i === 300) expected.push(['big/f300d/in', 2]);
    }
    expect(listed).toEqual(expected);
    expect(slices.map((s) => s.names.length)).toEqual([256, 45, 1, 256, 43]);
    expect(slices.map((s) => s.dir)).toEqual([
      path.join(root, 'big'),
      path.join(root, 'big'),
      path.join(root, 'big', 'f300d'),
      path.join(root, 'big'),
      path.join(root, 'big'),
    ]);
    // Nothing from a root that is not there, or a start outside the root.
    const none = [];
    for await (const slice of walkContained(path.join(scratch, 'missing'), root)) none.push(slice);
    for await (const slice of walkContained(path.join(root, 'big', 'f300d'), root)) none.push(slice);
    expect(none).toEqual([]);
  });
});

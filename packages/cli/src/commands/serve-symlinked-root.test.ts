import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { useTestHosts } from '@ack/host/test-support';
import { startAckServe, type ServingAck } from '../test-support/spawn-ack.js';

// `ack serve --workers 2` with a static root that is a symlink a deploy switches (`mv -T`), run as
// a user would: the built binary. Every worker serves the new release on the next request, new
// files included (docs/static-files.md "Symlinked release folders").
const hosts = useTestHosts();
const running: ServingAck[] = [];
afterEach(async () => {
  for (const s of running.splice(0)) {
    if (s.child.exitCode === null && s.child.signalCode === null) {
      s.child.kill('SIGTERM');
      await s.exited;
    }
  }
});

const STAMP = new Date('2026-01-02T03:04:05Z');

/** One request on its own connection, so the primary hands it to the next worker in turn. */
function get(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string; etag: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent: false, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, text, etag: String(res.headers.etag ?? '') }));
    });
    req.on('error', reject);
  });
}

describe('ack serve --workers 2 with a symlinked static root', () => {
  it('serves the switched release on the next request in every worker: new files, removed files, no stale 304', async () => {
    const h = hosts.home({ AppSettings: { LoadModules: ['wwwroot'] } }, {});
    const releases = path.join(h.home, 'releases');
    for (const n of [1, 2]) {
      const dir = path.join(releases, `r${n}`);
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, 'page.html'), `release ${n}`);
      fs.writeFileSync(path.join(dir, `only-${n}.html`), 'x');
      for (const f of ['page.html', `only-${n}.html`, '.']) fs.utimesSync(path.join(dir, f), STAMP, STAMP);
    }
    const current = path.join(h.home, 'current');
    fs.symlinkSync(path.join(releases, 'r1'), current);
    fs.mkdirSync(path.join(h.home, 'modules', 'wwwroot'), { recursive: true });
    fs.writeFileSync(
      path.join(h.home, 'modules', 'wwwroot', 'module.json'),
      JSON.stringify({ ModuleID: 'wwwroot', ModuleConfig: { WWWRootBasePath: current } }),
    );
    const served = await startAckServe(['--app-dir', h.appDir, '--port', '0', '--host', '127.0.0.1', '--workers', '2']);
    running.push(served);
    await vi.waitFor(() => expect(served.output().match(/primary \d+: worker \d+ listening/g)?.length).toBe(2), {
      timeout: 60_000,
      interval: 100,
    });

    const swap = (n: number) => {
      fs.symlinkSync(path.join(releases, `r${n}`), `${current}.tmp`);
      fs.renameSync(`${current}.tmp`, current);
    };
    const expectRelease = async (n: number) => {
      // Four requests on four connections: both workers answer, each from its own caches.
      for (let i = 0; i < 4; i++) {
        expect((await get(`${served.url}/page.html`)).text).toBe(`release ${n}`);
        expect((await get(`${served.url}/only-${n}.html`)).status, `only-${n} in release ${n}, pass ${i}`).toBe(200);
        expect((await get(`${served.url}/only-${3 - n}.html`)).status).toBe(404);
      }
    };
    await expectRelease(1);
    const etag1 = (await get(`${served.url}/page.html`)).etag;
    for (let i = 0; i < 4; i++)
      expect((await get(`${served.url}/page.html`, { 'if-none-match': etag1 })).status).toBe(304);
    swap(2);
    await expectRelease(2);
    for (let i = 0; i < 4; i++) {
      const after = await get(`${served.url}/page.html`, { 'if-none-match': etag1 });
      expect(after.status).toBe(200);
      expect(after.etag).not.toBe(etag1);
    }
    swap(1);
    await expectRelease(1);
  });
});

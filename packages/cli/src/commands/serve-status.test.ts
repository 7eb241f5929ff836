import { createHash } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { launchChromium, useTestHosts } from '@ack/host/test-support';
import { startAckServe, type ServingAck } from '../test-support/spawn-ack.js';

// The status page of a real `ack serve --workers 2` (docs/operations.md "Status page"): its figures
// come from every worker, a sync push shows in the last pushes, and Chromium draws them live.
// ACK_STATUS_SCREENSHOT=<file> keeps the screenshot (docs/images/status-page.png is made so).
const hosts = useTestHosts();
const KEY = 'status-page-key';
const TOKEN = 'status-sync-token';
const children: ChildProcess[] = [];
let browser: Awaited<ReturnType<typeof launchChromium>>;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});
afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }
});

async function serveWorkers(): Promise<ServingAck> {
  const home = hosts.home(
    // helmet's default Content-Security-Policy: the page must run without inline script or style.
    { AppSettings: { LoadModules: ['wwwroot'], HostAccessID: KEY, IsEnabledCSP: true } },
    {
      'modules/wwwroot/module.json': { ModuleID: 'wwwroot', ModuleConfig: { FileSyncTokens: [TOKEN] } },
      'modules/wwwroot/wwwroot/hello.txt': 'hello',
      'contracts/wwwroot/HDS/page.html': '<p>v1</p>',
    },
  );
  const served = await startAckServe([
    '--app-dir',
    home.appDir,
    '--port',
    '0',
    '--host',
    '127.0.0.1',
    '--workers',
    '2',
  ]);
  children.push(served.child);
  await vi.waitFor(() => expect(served.output().match(/primary \d+: worker \d+ listening/g)?.length ?? 0).toBe(2), {
    timeout: 60_000,
    interval: 100,
  });
  return served;
}

interface View {
  total: { requestsPerSecond: number | null; ready: boolean; openConnections: number };
  workers: { worker: number | null; pid: number; ready: boolean }[];
  pushes: { who: string; what: string; when: string; status: number; outcome: string; bytes: number }[];
}

async function status(url: string): Promise<View> {
  const res = await fetch(`${url}/status/status.json`, { headers: { hostAccessID: KEY, Connection: 'close' } });
  expect(res.status).toBe(200);
  return (await res.json()) as View;
}

async function push(url: string, body: string, token = TOKEN) {
  const form = new FormData();
  form.append('moduleName', 'wwwroot');
  form.append('changeType', 'Changed');
  form.append('filePath', 'HDS/page.html');
  form.append('file', new Blob([body]), 'page.html');
  const res = await fetch(`${url}/wwwroot/api/sync/upload`, {
    method: 'POST',
    headers: { Authorization: `Basic ${Buffer.from(`${token}:`).toString('base64')}`, Connection: 'close' },
    body: form,
  });
  await res.arrayBuffer();
  return res.status;
}

describe('the status page of ack serve --workers 2', () => {
  it(
    'shows both workers, the last sync push by token fingerprint, and draws live in Chromium',
    { timeout: 180_000 },
    async () => {
      const served = await serveWorkers();
      const view = await status(served.url);
      expect(view.workers.map((w) => w.worker).sort()).toEqual([1, 2]);
      expect(new Set(view.workers.map((w) => w.pid)).size).toBe(2);
      expect(view.workers.every((w) => w.ready)).toBe(true);
      expect(view.total.ready).toBe(true);

      // A push and a refused one: who is the token's fingerprint, never the token.
      const pushed = Date.now();
      const sha = (t: string) => `sha256:${createHash('sha256').update(t).digest('hex').slice(0, 12)}`;
      expect(await push(served.url, '<p>v1b</p>', 'not-the-token')).toBe(401);
      expect(await push(served.url, '<p>v2</p>')).toBe(200);
      const fingerprint = sha(TOKEN);
      // Noted when each answer ends, in the worker that answered it: wait for the second to be seen.
      let after: View | undefined;
      await vi.waitFor(
        async () => {
          after = await status(served.url);
          expect(after.pushes.slice(0, 2)).toMatchObject([
            { who: fingerprint, what: 'POST upload', status: 200, outcome: 'ok' },
            { who: sha('not-the-token'), what: 'POST upload', status: 401, outcome: 'refused' },
          ]);
        },
        { timeout: 10_000, interval: 100 },
      );
      expect(after!.pushes[0]!.bytes).toBeGreaterThan(0);
      expect(Date.parse(after!.pushes[0]!.when)).toBeGreaterThanOrEqual(pushed);
      expect(JSON.stringify(after!)).not.toContain(TOKEN);

      const page = await browser.newPage({ viewport: { width: 1100, height: 760 } });
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      // Every answer the page gets is a success, but the one refusal asked for (the browser's own
      // favicon.ico request is none of the page's).
      page.on('response', (r) => {
        const url = new URL(r.url());
        if (r.status() >= 400 && url.pathname !== '/favicon.ico') errors.push(`${r.status()} ${url.pathname}`);
      });
      const answer = await page.goto(`${served.url}/status`);
      expect(answer?.headers()['content-security-policy']).toContain("script-src 'self'");
      // A wrong credential is refused and said so; the right one shows the figures.
      await page.fill('#credential', `${KEY}x`);
      await page.click('button[type=submit]');
      await vi.waitFor(async () => expect(await page.textContent('#state')).toBe('The HostAccessID was refused.'), {
        timeout: 30_000,
        interval: 100,
      });
      await page.fill('#credential', KEY);
      await page.click('button[type=submit]');
      await vi.waitFor(async () => expect(await page.locator('#workers tbody tr').count()).toBe(2), {
        timeout: 30_000,
        interval: 100,
      });
      const first = await page.textContent('#updated');
      // Traffic while the page polls: requests/s shows a number, and the figures are redrawn.
      for (let i = 0; i < 30; i++)
        await (await fetch(`${served.url}/hello.txt`, { headers: { Connection: 'close' } })).text();
      await vi.waitFor(
        async () => {
          expect(await page.textContent('#updated')).not.toBe(first);
          const rps = (await page.textContent('#rps')) ?? '';
          expect(rps).toMatch(/^\d+\.\d$/);
          expect(Number(rps)).toBeGreaterThan(0);
        },
        { timeout: 30_000, interval: 100 },
      );
      expect(await page.textContent('#ready')).toBe('ready');
      expect(await page.textContent('#pushes tbody tr td:nth-child(2)')).toBe(fingerprint);
      expect(await page.textContent('#p95')).toMatch(/ms$| s$/);
      const shot = await page.screenshot({ fullPage: true });
      expect(shot.length).toBeGreaterThan(0);
      if (process.env.ACK_STATUS_SCREENSHOT) fs.writeFileSync(process.env.ACK_STATUS_SCREENSHOT, shot);
      expect(errors).toEqual(['401 /status/status.json']);
      await page.close();
    },
  );
});

import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, observedPage } from './test-support/browser.js';

// `ack init` end to end: the home it lays out, served by `ack serve`, shows its sample screen in
// Chromium with the loader (served by the wwwroot module itself) joining the shared files; the sync
// token it printed once pushes a screen. Runs the built `ack` (`pnpm build` first).
const ACK_BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../cli/dist/bin.js');

let browser: Browser;
let dir: string;
let server: ChildProcess | undefined;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-init-browser-'));
  browser = await launchChromium();
});
afterAll(async () => {
  if (server && server.exitCode === null) {
    const exited = new Promise((r) => server!.once('exit', r));
    server.kill('SIGTERM');
    await exited;
  }
  await browser?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

function ack(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [ACK_BIN, ...args], { env: { ...process.env, ...env } }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe('ack init', () => {
  it('lays out a home whose sample screen works in Chromium with the loader the module serves', async () => {
    const home = path.join(dir, 'home');
    const init = await ack(['init', home]);
    expect(init.code).toBe(0);
    const token = /sync token: (\S+)/.exec(init.stdout)?.[1];
    expect(token).toMatch(/^[A-Za-z0-9_-]{32}$/);
    const moduleJson = JSON.parse(fs.readFileSync(path.join(home, 'modules', 'wwwroot', 'module.json'), 'utf8'));
    expect(moduleJson.ModuleConfig.FileSyncTokens).toEqual([token]);
    // A second home gets another token.
    const other = await ack(['init', path.join(dir, 'other')]);
    expect(/shown only now\): (\S+)/.exec(other.stdout)?.[1]).not.toBe(token);

    server = spawn(process.execPath, [ACK_BIN, 'serve', home, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const url = await new Promise<string>((resolve, reject) => {
      const onData = (d: Buffer) => {
        out += d.toString();
        const m = /listening on (http:\/\/\S+)/.exec(out);
        if (m) resolve(m[1]!);
      };
      server!.stdout!.on('data', onData);
      server!.stderr!.on('data', onData);
      server!.once('exit', (code) => reject(new Error(`ack serve exited (${code}):\n${out}`)));
    });
    expect(out).not.toContain('WRN');
    // The token is printed by init only, never by the host.
    expect(out).not.toContain(token!);

    const loader = await fetch(`${url}/wwwroot/api/loader/ack.loader.js`);
    expect(loader.status).toBe(200);
    expect(loader.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(loader.headers.get('cache-control')).toBe('no-cache');
    expect(await loader.text()).toContain('var AckLoader=');

    const { page, pageErrors } = await observedPage(browser);
    try {
      // The first frame that paints the heading is already themed (docs/loader.md, "Styled from the
      // first frame"): read in requestAnimationFrame, just before each frame is painted.
      await page.addInitScript(() => {
        const look = () => {
          const h1 = document.querySelector('h1');
          if (!h1) return requestAnimationFrame(look);
          (window as unknown as { firstFrame: unknown }).firstFrame = getComputedStyle(h1).color;
        };
        requestAnimationFrame(look);
      });
      await page.goto(`${url}/`);
      await page.waitForFunction(() => 'firstFrame' in window);
      expect(await page.evaluate(() => (window as unknown as { firstFrame: unknown }).firstFrame)).toBe(
        'rgb(11, 110, 79)',
      );
      await page.waitForSelector('#greeting[data-state="ready"]', { timeout: 15_000 });
      expect(await page.textContent('#greeting')).toBe('Hello from a shared file (Your company)');
      expect(await page.$$eval('#joined li', (lis) => lis.map((li) => li.textContent))).toEqual([
        'joined /shared/theme.css',
        'joined /shared/app-settings.json',
      ]);
      // The shared theme is applied: the h1 takes its accent colour.
      expect(await page.evaluate(() => getComputedStyle(document.querySelector('h1')!).color)).toBe('rgb(11, 110, 79)');
      expect(pageErrors).toEqual([]);
    } finally {
      await page.close();
    }

    // The printed token pushes a screen that is then served under /view/.
    const screen = path.join(dir, 'hello.html');
    fs.writeFileSync(screen, '<h1>pushed</h1>');
    const upload = await ack(
      ['sync', 'upload', screen, '--module', 'wwwroot', '--path', 'HDS/hello.html', '--url', url],
      { ACK_SYNC_TOKEN: token! },
    );
    expect(upload.code, upload.stderr).toBe(0);
    expect(await (await fetch(`${url}/view/hello.html`)).text()).toBe('<h1>pushed</h1>');
  });
});

import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createHost, type AckHost } from '@ack/host';
import { createTestHome, testAppSettings, type TestHome } from '@ack/host/test-support';
import { wwwrootModule } from '../../wwwroot/src/index.js';
import { bundle } from '../build.mjs';
import { launchChromium } from './test-support/browser.js';

/** The built `ack` command: the CSS and HTML are pushed as a developer would push them. */
const ACK_BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../cli/dist/bin.js');
const TOKEN = 'live-reload-token';

let browser: Browser;
const running: AckHost[] = [];
const homes: TestHome[] = [];

beforeAll(async () => {
  if (!fs.existsSync(ACK_BIN)) throw new Error(`${ACK_BIN} not found: run pnpm build first`);
  browser = await launchChromium();
});
afterAll(async () => browser?.close());
afterEach(async () => {
  for (const host of running.splice(0)) await host.close({ graceMs: 500 });
  for (const home of homes.splice(0)) home.remove();
});

/** A home with a contract screen that links its stylesheet and starts the loader. */
async function screenHome(): Promise<TestHome> {
  const { iife } = await bundle();
  const home = createTestHome(testAppSettings({ AppSettings: { LoadModules: ['wwwroot'], RunningEnvironment: 'D' } }), {
    'modules/wwwroot/module.json': {
      ModuleID: 'wwwroot',
      ModuleConfig: { FileSyncTokens: [TOKEN], SharedFileConfigPath: '../config/shared.json' },
    },
    'config/shared.json': { items: [{ requestPath: '/shared/base.css', hostFilePath: '../shared/base.css' }] },
    'shared/base.css': 'body { margin: 0 }',
    'modules/wwwroot/wwwroot/lib/ack.loader.js': iife.code,
    'contracts/wwwroot/HDS/screen.css': '#title { color: rgb(0, 0, 255) }',
    'contracts/wwwroot/HDS/screen.html':
      '<!doctype html><html><head><link rel="stylesheet" href="/view/screen.css">' +
      '<script src="/lib/ack.loader.js" data-ack-autoload></script></head><body><h1 id="title">v1</h1></body></html>',
  });
  homes.push(home);
  return home;
}

async function startHost(home: TestHome, port = 0): Promise<{ host: AckHost; url: string }> {
  const host = await createHost({
    appDir: home.appDir,
    modules: { wwwroot: wwwrootModule },
    env: {},
    logging: { quiet: true },
  });
  running.push(host);
  const url = await host.listen({ port, host: '127.0.0.1' });
  return { host, url };
}

/** `ack sync upload` of one file into the wwwroot contract folder. */
async function syncUpload(home: TestHome, url: string, remotePath: string, content: string): Promise<void> {
  const local = home.write(`work/${path.basename(remotePath)}`, content);
  const run = await promisify(execFile)(
    process.execPath,
    [ACK_BIN, 'sync', 'upload', local, '--module', 'wwwroot', '--path', remotePath, '--url', url],
    {
      env: { ...process.env, ACK_SYNC_TOKEN: TOKEN },
      timeout: 30_000,
    },
  );
  expect(run.stdout).toContain(`Changed ${remotePath}`);
}

const titleColor = (page: Page) => page.evaluate(() => getComputedStyle(document.getElementById('title')!).color);

/** Opens the screen, waits until the loader listens, and marks the window (a reload loses the mark). */
async function openScreen(url: string, host: AckHost): Promise<Page> {
  const page = await browser.newPage();
  await page.goto(`${url}/view/screen.html`);
  await page.evaluate(() => window.AckLoader.ready.then(() => true));
  await expect.poll(() => host.upgrades.open, { timeout: 10_000 }).toBe(1);
  await page.evaluate(() => (window.marker = 'kept'));
  return page;
}
const marker = (page: Page) => page.evaluate(() => window.marker ?? null);

declare global {
  interface Window {
    AckLoader: { ready: Promise<unknown> };
    /** Set by the test; a page reload loses it. */
    marker?: string;
  }
}

describe('live reload in Chromium', () => {
  it('restyles the open screen in place when its CSS is pushed with ack sync upload, and reloads it for an HTML change', async () => {
    const home = await screenHome();
    const { host, url } = await startHost(home);
    const page = await openScreen(url, host);
    expect(await titleColor(page)).toBe('rgb(0, 0, 255)');

    await syncUpload(home, url, 'HDS/screen.css', '#title { color: rgb(255, 0, 0) }');
    await page.waitForFunction(
      () => getComputedStyle(document.getElementById('title')!).color === 'rgb(255, 0, 0)',
      undefined,
      { timeout: 10_000 },
    );
    expect(await marker(page)).toBe('kept');

    const reloaded = page.waitForEvent('load', { timeout: 10_000 });
    await syncUpload(
      home,
      url,
      'HDS/screen.html',
      '<!doctype html><html><head><link rel="stylesheet" href="/view/screen.css"></head><body><h1 id="title">v2</h1></body></html>',
    );
    await reloaded;
    expect(await page.textContent('#title')).toBe('v2');
    expect(await marker(page)).toBeNull();
    await page.close();
  });

  it('reconnects after the host restarts on the same port and applies the next change', async () => {
    const home = await screenHome();
    const first = await startHost(home);
    const page = await openScreen(first.url, first.host);
    const port = Number(new URL(first.url).port);
    await first.host.close({ graceMs: 500 });

    const second = await startHost(home, port);
    await expect.poll(() => second.host.upgrades.open, { timeout: 20_000 }).toBe(1);
    await syncUpload(home, second.url, 'HDS/screen.css', '#title { color: rgb(0, 128, 0) }');
    await page.waitForFunction(
      () => getComputedStyle(document.getElementById('title')!).color === 'rgb(0, 128, 0)',
      undefined,
      { timeout: 10_000 },
    );
    expect(await marker(page)).toBe('kept');
    await page.close();
  });
});

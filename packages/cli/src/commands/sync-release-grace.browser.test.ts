import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, testAppSettings, useTestHosts, waitFor } from '@ack/host/test-support';
import { wwwrootModule } from '@ack/wwwroot';
import { useCleanups } from '../test-support/cleanups.js';
import { runAck } from '../test-support/spawn-ack.js';
import { workDir } from '../test-support/work.js';

// A screen open in Chromium across a release that removed one of its scripts (docs/releases.md
// "Grace for removed files"): the page of release 1 loads its script lazily, on a click, after
// release 2 (without that script) was pushed with `ack sync upload --delete` and switched. Within
// `Releases:GraceSeconds` the script still loads from release 1; after it a fresh request is 404.

const TOKEN = 'release-grace-token';
const GRACE_SECONDS = 5;
const hosts = useTestHosts();
const cleanups = useCleanups();

const PAGE_1 = `<!doctype html><html><head><meta charset="utf-8"><title>one</title></head><body>
<button id="more">more</button><p id="out">not loaded</p>
<script type="module">
document.getElementById('more').addEventListener('click', async () => {
  try {
    const lazy = await import('./lazy.js');
    document.getElementById('out').textContent = lazy.text;
  } catch (err) {
    document.getElementById('out').textContent = 'failed: ' + err.message;
  }
});
</script></body></html>`;
const LAZY_1 = `export const text = 'lazy script of release 1';\n`;
const PAGE_2 = '<!doctype html><html><head><meta charset="utf-8"><title>two</title></head><body>two</body></html>';

describe('a screen of release 1 open in Chromium while release 2 goes live', () => {
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('loads the script release 2 removed while the grace lasts, and a fresh request for it is 404 after', async () => {
    const home = hosts.home(testAppSettings({ AppSettings: { LoadModules: ['wwwroot'] } }), {
      'modules/wwwroot/module.json': {
        ModuleID: 'wwwroot',
        ModuleConfig: {
          FileSyncTokens: [TOKEN],
          IsEnabledReleases: true,
          Releases: { GraceSeconds: GRACE_SECONDS },
        },
      },
    });
    const host = await hosts.start(home, { wwwroot: wwwrootModule });
    const hds = path.join(home.home, 'contracts', 'wwwroot', 'HDS');
    const push = (files: Record<string, string>) =>
      runAck(
        [
          'sync',
          'upload',
          workDir(cleanups, files),
          '--module',
          'wwwroot',
          '--path',
          'HDS/',
          '--url',
          host.url,
          '--delete',
        ],
        { env: { ACK_SYNC_TOKEN: TOKEN, ACK_URL: '' } },
      );

    const first = await push({ 'page.html': PAGE_1, 'lazy.js': LAZY_1 });
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const release1 = path.basename(fs.readlinkSync(hds));

    const page = await browser.newPage();
    cleanups.push(() => page.close());
    const opened = await page.goto(`${host.url}/view/page.html`);
    expect(opened?.status()).toBe(200);
    expect(await opened?.headerValue('ack-release')).toBe(release1);
    expect(await page.textContent('#out')).toBe('not loaded');

    // Release 2 removes lazy.js and is live once the command returns.
    const second = await push({ 'page.html': PAGE_2 });
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(/1 changed, 1 deleted/);
    expect(path.basename(fs.readlinkSync(hds))).not.toBe(release1);
    expect(fs.existsSync(path.join(hds, 'lazy.js'))).toBe(false);

    // The open screen asks for its script now: served from release 1 within the grace.
    const lazy = page.waitForResponse((r) => r.url().endsWith('/view/lazy.js'));
    await page.click('#more');
    expect((await lazy).status()).toBe(200);
    await waitFor(async () => (await page.textContent('#out')) !== 'not loaded', { timeout: 10_000 });
    expect(await page.textContent('#out')).toBe('lazy script of release 1');

    // Once the grace is over, a fresh request (not from the browser's cache) is 404.
    // (A string: the page's fetch takes `cache`, which the Node types of this file do not know.)
    const status = () => page.evaluate<number>(`fetch('./lazy.js', { cache: 'no-store' }).then((r) => r.status)`);
    await waitFor(async () => (await status()) === 404, {
      timeout: (GRACE_SECONDS + 15) * 1000,
      interval: 250,
      message: 'lazy.js to be 404 after the grace',
    });
    expect(await status()).toBe(404);
  }, 60_000);
});

import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { chromiumPath, launchChromium } from './browser.js';

// `pnpm test` runs scripts/ensure-chromium.mjs before any test (it reads the built host, which
// `pnpm test` builds first).
const script = path.resolve(fileURLToPath(import.meta.url), '../../../../../scripts/ensure-chromium.mjs');
const saved = process.env.ACK_CHROMIUM_PATH;
afterEach(() => {
  if (saved === undefined) delete process.env.ACK_CHROMIUM_PATH;
  else process.env.ACK_CHROMIUM_PATH = saved;
});

describe('the browser of the browser tests', () => {
  it('is /usr/bin/chromium unless ACK_CHROMIUM_PATH names another', () => {
    expect(chromiumPath({})).toBe('/usr/bin/chromium');
    expect(chromiumPath({ ACK_CHROMIUM_PATH: '/opt/chromium/chrome' })).toBe('/opt/chromium/chrome');
  });

  it('launchChromium honours ACK_CHROMIUM_PATH and names it when it is missing', async () => {
    process.env.ACK_CHROMIUM_PATH = '/nonexistent/chromium';
    await expect(launchChromium()).rejects.toThrow(/\/nonexistent\/chromium.*ACK_CHROMIUM_PATH/);
  });

  it('the pre-test check prints one line naming what is missing, and fails, before any test runs', () => {
    const run = spawnSync(process.execPath, [script], {
      env: { ...process.env, ACK_CHROMIUM_PATH: '/nonexistent/chromium' },
      encoding: 'utf8',
    });
    expect(run.status).toBe(1);
    const lines = run.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/Chromium at \/nonexistent\/chromium.*apt-get install chromium.*ACK_CHROMIUM_PATH/);
    expect(run.stdout).toBe('');
  });
});

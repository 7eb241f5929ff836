import { afterEach, describe, expect, it } from 'vitest';
import { chromiumPath, launchChromium } from './browser.js';

// `pnpm test` checks for the browser before anything else (scripts/prepare-tests.test.ts).
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
});

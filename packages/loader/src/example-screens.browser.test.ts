import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { observedPage, useExampleInBrowser } from './test-support/browser.js';
import { exampleHome, startExampleHost } from './test-support/hosts.js';

// The example's business screens in Chromium, against the example host as `pnpm start` serves it.
// Each test also takes the screenshot shown in the README: into docs/images/ with
// ACK_UPDATE_SCREENSHOTS=1 (then commit them), into a temporary folder otherwise.
const shots =
  process.env.ACK_UPDATE_SCREENSHOTS === '1'
    ? path.resolve(exampleHome, '../../docs/images')
    : fs.mkdtempSync(path.join(os.tmpdir(), 'ack-screens-'));
const ACCENT = 'rgb(11, 110, 79)';
const SURFACE = 'rgb(238, 245, 241)';

const example = useExampleInBrowser(startExampleHost);
afterAll(() => {
  if (process.env.ACK_UPDATE_SCREENSHOTS !== '1') fs.rmSync(shots, { recursive: true, force: true });
});

async function screenshot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(shots, { recursive: true });
  const file = path.join(shots, `${name}.png`);
  await page.screenshot({ path: file, fullPage: false });
  // A PNG of the viewport: the signature, and more than an empty page's few hundred bytes.
  const bytes = fs.readFileSync(file);
  expect(bytes.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
  expect(bytes.length).toBeGreaterThan(10_000);
}

async function themed(page: Page): Promise<{ bar: string; h1: string }> {
  return page.evaluate(() => ({
    bar: getComputedStyle(document.querySelector('.ack-bar')!).backgroundColor,
    h1: getComputedStyle(document.querySelector('h1')!).color,
  }));
}

describe('example screens', () => {
  // The first frame that paints the screen's bar must already be themed: a screen whose theme came
  // after its first paint showed a bare page (docs/loader.md, "Styled from the first frame"). Read
  // in requestAnimationFrame, which runs just before each frame is painted and not at all while the
  // page's own style sheets are still on their way; no wait of any length.
  for (const screen of ['/view/ORD/ORD010.html', '/htmx/contacts.html', '/']) {
    it(`${screen}: its first frame is themed`, async () => {
      const { page, pageErrors } = await observedPage(example.browser);
      try {
        await page.addInitScript(() => {
          const look = () => {
            const bar = document.querySelector('.ack-bar');
            if (!bar) return requestAnimationFrame(look);
            (window as unknown as { firstFrame: unknown }).firstFrame = {
              bar: getComputedStyle(bar).backgroundColor,
              body: getComputedStyle(document.body).backgroundColor,
            };
          };
          requestAnimationFrame(look);
        });
        await page.goto(`${example.url}${screen}`);
        await page.waitForFunction(() => 'firstFrame' in window);
        expect(await page.evaluate(() => (window as unknown as { firstFrame: unknown }).firstFrame)).toEqual({
          bar: ACCENT,
          body: SURFACE,
        });
        expect(pageErrors).toEqual([]);
      } finally {
        await page.close();
      }
    });
  }

  it('orders: a list and a detail form through the index APIs, with the shared files joined', async () => {
    const { page, pageErrors } = await observedPage(example.browser);
    try {
      await page.setViewportSize({ width: 1200, height: 760 });
      await page.goto(`${example.url}/view/ORD/ORD010.html`);
      await page.waitForSelector('html[data-screen="ready"][data-shared="joined"]');
      expect(await themed(page)).toEqual({ bar: ACCENT, h1: ACCENT });
      expect(await page.textContent('#app-name')).toBe('ack example'); // from the shared settings.json
      expect(await page.textContent('#joined')).toContain('/shared/theme.css');
      expect(await page.$$eval('#orders tbody tr', (rows) => rows.length)).toBe(5);
      // The first order is shown with its code from encode-no.
      const code = await page.inputValue('#f-code');
      const expected = await (await fetch(`${example.url}/wwwroot/api/index/encode-no?numbers=1041`)).json();
      expect(code).toBe(expected);

      await page.click('#orders tbody tr:nth-child(3)');
      await page.waitForFunction(() => (document.getElementById('f-code') as HTMLInputElement).value !== '…');
      expect(await page.inputValue('#f-customer')).toBe('Fabrikam Inc');
      await screenshot(page, 'example-orders');

      await page.click('#new-order');
      await page.waitForFunction(() =>
        /^New order, id [0-9a-f]{32} from the host\.$/.test(
          document.getElementById('detail-status')!.textContent ?? '',
        ),
      );
      await page.fill('#f-customer', 'Wide World Importers');
      await page.fill('#f-amount', '99.5');
      await page.click('#detail button[type="submit"]');
      await page.waitForSelector('html[data-saved="1042"]');
      expect(await page.textContent('#detail-status')).toMatch(/^Saved order 1042 \(checksum [0-9a-f]{12}…\)\.$/);
      expect(await page.textContent('#orders tbody tr:first-child')).toContain('Wide World Importers');
      expect(pageErrors).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('contacts: the htmx sample in the same look', async () => {
    const { page, pageErrors } = await observedPage(example.browser);
    try {
      await page.setViewportSize({ width: 1200, height: 760 });
      await page.goto(`${example.url}/htmx/contacts.html`);
      await page.waitForSelector('#contacts-table tbody tr');
      expect(await themed(page)).toEqual({ bar: ACCENT, h1: ACCENT });
      // The right-hand panel says what it is for before a contact is chosen (it was an empty card).
      expect(await page.textContent('main > section:nth-child(2)')).toContain('Choose a contact');
      await page.click('#contacts-table tbody tr:first-child a');
      await page.waitForSelector('#editor #contact-details');
      await screenshot(page, 'example-contacts');
      expect(pageErrors).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('the home page links the screens', async () => {
    const { page, pageErrors } = await observedPage(example.browser);
    try {
      await page.setViewportSize({ width: 1200, height: 760 });
      await page.goto(`${example.url}/`);
      expect(await themed(page)).toEqual({ bar: ACCENT, h1: ACCENT });
      expect(await page.$$eval('.ack-tiles a', (as) => as.map((a) => a.getAttribute('href')))).toEqual([
        '/view/ORD/ORD010.html',
        '/htmx/contacts.html',
        '/loader-demo.html',
      ]);
      await screenshot(page, 'example-home');
      expect(pageErrors).toEqual([]);
    } finally {
      await page.close();
    }
  });
});

import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, type TestHost } from '@ack/host/test-support';
import { startSignInHost } from '../test-support/sign-in-fixture.js';

// The sample screen of examples/basic, served from the example's own static root, in Debian's Chromium (or ACK_CHROMIUM_PATH).
const exampleRoot = path.resolve(
  fileURLToPath(import.meta.url),
  '../../../../../examples/basic/modules/wwwroot/wwwroot',
);

describe('htmx sample screen in a browser', () => {
  let t: TestHost;
  let browser: Browser;
  beforeAll(async () => {
    t = await startSignInHost({ moduleConfig: { WWWRootBasePath: exampleRoot } });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  // The example screen (static root) and the whole page the API itself renders behave the same.
  for (const entry of ['/htmx/contacts.html', '/wwwroot/api/htmx/contacts']) {
    it(`list, load more, create, update, quick view and delete by clicks: ${entry}`, async () => {
      const page = await browser.newPage();
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      page.on('dialog', (d) => void d.accept());
      try {
        const res = await page.goto(`${t.url}${entry}`);
        expect(res?.status()).toBe(200);
        await exerciseContacts(page);
        expect(errors).toEqual([]);
      } finally {
        await page.close();
      }
    });
  }
});

async function exerciseContacts(page: Page): Promise<void> {
  const rows = page.locator('#contact-rows tr[id^="contact-"]');
  await expect.poll(() => rows.count()).toBe(10);
  // A marker that a full navigation would lose: every later step must be a fragment swap.
  await page.evaluate(() => ((globalThis as { __noReload?: boolean }).__noReload = true));
  const stillSamePage = () => page.evaluate(() => (globalThis as { __noReload?: boolean }).__noReload === true);

  await page.click('#load-more button');
  await expect.poll(() => rows.count()).toBe(20);

  // Create: first with an error (422 re-renders the form), then for real.
  await page.click('#new-contact');
  await page.waitForSelector('#editor #contact-form');
  await page.fill('#contact-form input[name="email"]', 'not-an-address');
  await page.click('#contact-form button[type="submit"]');
  await page.waitForSelector('#contact-form .error[data-field="name"]');
  expect(await page.locator('#contact-form .error[data-field="email"]').count()).toBe(1);
  expect(await page.inputValue('#contact-form input[name="email"]')).toBe('not-an-address');
  await page.fill('#contact-form input[name="name"]', 'Browser <Made> Contact');
  await page.fill('#contact-form input[name="email"]', 'browser@example.com');
  await page.click('#contact-form button[type="submit"]');
  await page.waitForSelector('#editor #contact-details');
  expect(await page.textContent('#contact-details h2')).toBe('Browser <Made> Contact');
  await expect.poll(() => page.textContent('#messages')).toBe('Created Browser <Made> Contact.');
  const id = await page.getAttribute('#contact-details', 'data-contact-id');
  expect(page.url()).toMatch(new RegExp(`/wwwroot/api/htmx/contacts/${id}$`)); // HX-Push-Url
  // HX-Trigger reloaded the list: the new contact is at the top.
  await expect.poll(() => rows.first().getAttribute('id')).toBe(`contact-${id}`);
  expect(await page.textContent(`#contact-${id} td a`)).toBe('Browser <Made> Contact');

  // Update through the row's Edit button.
  await page.click(`#contact-${id} button:has-text("Edit")`);
  await page.waitForSelector(`#contact-form[hx-put$="/contacts/${id}"]`);
  await page.fill('#contact-form input[name="name"]', 'Renamed Contact');
  await page.click('#contact-form button[type="submit"]');
  await expect.poll(() => page.textContent('#contact-details h2')).toBe('Renamed Contact');
  await expect.poll(() => page.textContent(`#contact-${id} td a`)).toBe('Renamed Contact');

  // Quick view.
  await page.click(`#contact-${id} button:has-text("Quick view")`);
  await expect.poll(() => page.textContent('#quick-view .quick strong')).toBe('Renamed Contact');

  // Delete (confirmed): the row goes, the message says so, the server forgot it.
  const before = await rows.count();
  await page.click(`#contact-${id} button:has-text("Delete")`);
  await expect.poll(() => page.locator(`#contact-${id}`).count()).toBe(0);
  expect(await rows.count()).toBe(before - 1);
  await expect.poll(() => page.textContent('#messages')).toBe('Deleted Renamed Contact.');
  expect(await stillSamePage()).toBe(true);
}

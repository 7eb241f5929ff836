import type { Browser, Page } from 'playwright-core';

/** The one browser launch of every browser test (ACK_CHROMIUM_PATH), from the host's test support. */
export { launchChromium } from '@ack/host/test-support';

/** A page that records its uncaught script errors and console messages. */
export interface ObservedPage {
  page: Page;
  pageErrors: string[];
  console: string[];
}

export async function observedPage(browser: Browser): Promise<ObservedPage> {
  const page = await browser.newPage();
  const observed: ObservedPage = { page, pageErrors: [], console: [] };
  page.on('pageerror', (e) => observed.pageErrors.push(e.message));
  page.on('console', (m) => observed.console.push(`${m.type()}: ${m.text()}`));
  return observed;
}

/** What the loader put into `<head>` as text assets, in document order. */
export function textAssetsOf(page: Page): Promise<Array<{ id: string; type: string; text: string; src: string | null }>> {
  return page.evaluate(() =>
    [...document.head.querySelectorAll('script[data-ack-src]')].map((e) => ({
      id: e.id,
      type: (e as HTMLScriptElement).type,
      text: e.textContent ?? '',
      src: e.getAttribute('data-ack-src'),
    })),
  );
}

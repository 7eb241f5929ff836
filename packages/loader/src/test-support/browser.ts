import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { launchChromium } from '@ack/host/test-support';

/** The one browser launch of every browser test (ACK_CHROMIUM_PATH), from the host's test support. */
export { launchChromium };

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
export function textAssetsOf(
  page: Page,
): Promise<Array<{ id: string; type: string; text: string; src: string | null }>> {
  return page.evaluate(() =>
    [...document.head.querySelectorAll('script[data-ack-src]')].map((e) => ({
      id: e.id,
      type: (e as HTMLScriptElement).type,
      text: e.textContent ?? '',
      src: e.getAttribute('data-ack-src'),
    })),
  );
}

/**
 * One Chromium and one example host (examples/basic) for a test file: started in `beforeAll`,
 * closed in `afterAll`. Read `browser` and `url` inside tests.
 */
export function useExampleInBrowser(
  startHost: () => Promise<{ host: { close(o: { graceMs: number }): Promise<void> }; url: string }>,
): { readonly browser: Browser; readonly url: string } {
  let browser: Browser | undefined;
  let started: Awaited<ReturnType<typeof startHost>> | undefined;
  beforeAll(async () => {
    [browser, started] = await Promise.all([launchChromium(), startHost()]);
  });
  afterAll(async () => {
    await Promise.all([browser?.close(), started?.host.close({ graceMs: 500 })]);
  });
  return {
    get browser() {
      if (!browser) throw new Error('Chromium is not running (beforeAll failed)');
      return browser;
    },
    get url() {
      return started?.url ?? '';
    },
  };
}

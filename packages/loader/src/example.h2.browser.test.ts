import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AckHost } from '@ack/host';
import { makeTestCertificate } from '@ack/host/test-support';
import { launchChromium, observedPage } from './test-support/browser.js';
import { startExampleHost } from './test-support/hosts.js';

// The example screen in Chromium over HTTPS: the page and everything it loads come over HTTP/2
// (ALPN on the host's TLS port). The certificate is a throw-away self-signed one.

let browser: Browser;
let host: AckHost;
let certDir: string;

beforeAll(async () => {
  certDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-h2-browser-'));
  const cert = makeTestCertificate(certDir);
  [browser, { host }] = await Promise.all([
    launchChromium(['--ignore-certificate-errors']),
    startExampleHost({
      env: { AppSettings__ServerDevCertFilePath: cert.cert, AppSettings__ServerDevCertKeyFilePath: cert.key },
      tlsPort: 0,
    }),
  ]);
});
afterAll(async () => {
  await Promise.all([browser?.close(), host?.close({ graceMs: 500 })]);
  fs.rmSync(certDir, { recursive: true, force: true });
});

describe('example screen over HTTPS in Chromium', () => {
  it('loads /view/SYS/SYS010.html and every resource it joins over h2', async () => {
    const { page, pageErrors } = await observedPage(browser);
    try {
      await page.goto(`${host.tlsUrl}/view/SYS/SYS010.html`);
      await page.waitForFunction(() => document.documentElement.getAttribute('data-screen') === 'ready');
      const protocols = await page.evaluate(() => ({
        page: (performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming).nextHopProtocol,
        resources: (performance.getEntriesByType('resource') as PerformanceResourceTiming[]).map((r) => [
          new URL(r.name).pathname,
          r.nextHopProtocol,
        ]),
      }));
      expect(protocols.page).toBe('h2');
      const paths = protocols.resources.map(([p]) => p);
      expect(paths).toEqual(
        expect.arrayContaining([
          '/lib/ack.loader.js',
          '/view/SYS/SYS010.css',
          '/view/SYS/SYS010.js',
          '/shared-files/manifest',
        ]),
      );
      for (const [, protocol] of protocols.resources) expect(protocol).toBe('h2');
      expect(await page.textContent('#sys010-status')).toMatch(/^Ready: 0 loader problem/);
      expect(pageErrors).toEqual([]);
    } finally {
      await page.close();
    }
  });
});

import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { observedPage, textAssetsOf, useExampleInBrowser } from './test-support/browser.js';
import { exampleHome, startExampleHost } from './test-support/hosts.js';

// The loader in a real browser against the real example host (examples/basic, as `pnpm start`
// serves it): the demo screen /loader-demo.html joins the example's six shared files.
const shared = (name: string) => fs.readFileSync(path.join(exampleHome, 'shared', name), 'utf8');

const example = useExampleInBrowser(startExampleHost);

describe('example host: /loader-demo.html', () => {
  it('serves the loader at the stable URL /lib/ack.loader.js as a loader file (never cached)', async () => {
    const response = await fetch(`${example.url}/lib/ack.loader.js`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/javascript/);
    expect(response.headers.get('cache-control')).toMatch(/no-cache/);
    expect(response.headers.get('cache-control')).toMatch(/no-store/);
    expect(response.headers.get('expires')).toBe('-1');
    expect(await response.text()).toContain('var AckLoader=');
  });

  it('joins the shared CSS, script and text assets, and the screen shows the settings', async () => {
    const { page, pageErrors } = await observedPage(example.browser);
    try {
      await page.goto(`${example.url}/loader-demo.html`);
      await page.waitForFunction(() => document.documentElement.getAttribute('data-demo') === 'ready');

      // Styles and scripts of the catalog are in the page, in catalog (= manifest) order.
      const catalog = JSON.parse(fs.readFileSync(path.join(exampleHome, 'config', 'shared_files.json'), 'utf8')) as {
        items: Array<{ requestPath: string }>;
      };
      const inPage = await page.evaluate(() => ({
        styles: [...document.querySelectorAll('link[rel="stylesheet"]')].map((l) => l.getAttribute('href')),
        scripts: [...document.querySelectorAll('script[src^="/shared/"]')].map((l) => l.getAttribute('src')),
      }));
      expect(inPage).toEqual({
        styles: catalog.items.map((i) => i.requestPath).filter((p) => p.endsWith('.css')),
        scripts: catalog.items.map((i) => i.requestPath).filter((p) => p.endsWith('.js')),
      });
      expect(inPage.styles).toContain('/shared/theme.css');
      expect(inPage.scripts).toContain('/shared/app-init.js');

      // The shared style sheet is applied (theme.css: h1 in the accent colour, body surface).
      const h1 = await page.evaluate(() => {
        const style = getComputedStyle(document.querySelector('h1')!);
        return {
          color: style.color,
          border: style.borderBottomColor,
          background: getComputedStyle(document.body).backgroundColor,
        };
      });
      expect(h1).toEqual({ color: 'rgb(11, 110, 79)', border: 'rgb(11, 110, 79)', background: 'rgb(238, 245, 241)' });

      // The shared script ran before the end was announced.
      const app = await page.evaluate(() => ({
        mark: document.documentElement.getAttribute('data-app-init'),
        name: (window as unknown as { ackApp?: { name: string; runs: number } }).ackApp?.name,
        runs: (window as unknown as { ackApp?: { runs: number } }).ackApp?.runs,
      }));
      expect(app).toEqual({ mark: 'done', name: 'ack example', runs: 1 });

      // Every other shared file is an inert text asset with the type of the table and its ID.
      const assets = await textAssetsOf(page);
      const byId = Object.fromEntries(assets.map((a) => [a.id, a]));
      expect(byId.settings).toMatchObject({ type: 'application/json', text: shared('settings.json') });
      expect(byId.notice).toMatchObject({ type: 'text/html', text: shared('notice.html') });
      expect(byId.readme).toMatchObject({ type: 'text/markdown', text: shared('readme.md') });
      expect(byId.terms).toMatchObject({ type: 'text/plain', text: shared('terms.txt') });

      // JSON is readable with JSON.parse, and the screen shows its values.
      const settings = await page.evaluate(() => JSON.parse(document.getElementById('settings')!.textContent!));
      expect(settings).toEqual(JSON.parse(shared('settings.json')));
      const shown = await page.evaluate(() =>
        Object.fromEntries(
          [...document.querySelectorAll('[data-setting]')].map((e) => [e.getAttribute('data-setting'), e.textContent]),
        ),
      );
      expect(shown).toEqual({
        applicationName: 'ack example',
        environment: 'Development',
        supportEmail: 'support@example.com',
        pageSize: '20',
        features: 'shared files, contract screens, dev sign-in',
      });
      expect(await page.textContent('#notice-view .ack-notice')).toContain('this text comes from notice.html');
      expect(await page.textContent('#terms-view')).toBe(shared('terms.txt'));

      // Nothing went wrong: an empty loader log, no script errors.
      expect(await page.evaluate(() => (window as unknown as { AckLoader: { log: unknown[] } }).AckLoader.log)).toEqual(
        [],
      );
      expect(await page.textContent('#log-view')).toBe('No problems.');
      expect(pageErrors).toEqual([]);
    } finally {
      await page.close();
    }
  });
});

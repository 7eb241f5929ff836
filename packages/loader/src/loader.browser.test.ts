import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AckModuleFactory } from '@ack/host';
import { freePort } from '@ack/host/test-support';
import { launchChromium, observedPage, textAssetsOf, type ObservedPage } from './test-support/browser.js';
import { startLoaderHome } from './test-support/hosts.js';

// The loader in a real browser against a real host whose catalog exercises every rule of
// docs/loader.md: all text asset types, several scripts and styles, a missing target (404), a duplicate
// ID, `.CSS` in upper case, invalid JSON. A module loaded before wwwroot can take over the
// manifest path to answer 500 or a body that is not JSON.

/** The first script is large, so that a loader that ran scripts as they arrive would misorder them. */
const ORDER = (name: string, pad = 0) =>
  `/*${'x'.repeat(pad)}*/(window.sharedOrder = window.sharedOrder || []).push(${JSON.stringify(name)});\n`;
const SHARED: Record<string, string> = {
  'theme.css': 'h1 { color: rgb(0, 128, 0); letter-spacing: 1px; }\n',
  'more.css': 'h1 { letter-spacing: 3px; }\n',
  'LOUD.CSS': 'h1 { color: rgb(255, 0, 0); }\n',
  'c-first.js': ORDER('c-first', 2_000_000),
  'a-second.js': ORDER('a-second'),
  'b-third.js': ORDER('b-third'),
  'settings.json': JSON.stringify({ pageSize: 25, title: 'Grüße, 안녕' }),
  'frag.html': '<p class="x">fragment</p><script>window.injected = true</script>\n',
  'page.htm': '<div>htm</div>\n',
  'data.xml': '<?xml version="1.0"?><items><item id="1"/></items>\n',
  'notes.md': '# Notes\n\n* one </script> two\n',
  'plain.txt': 'plain text\n',
  'table.csv': 'id,name\n1,Ada\n',
  'config.yaml': 'key: value\n',
  LICENSE: 'MIT\n',
  'my-app.settings.json': '{"ok":true}',
  'other-settings.xml': '<dup/>',
  'broken.json': '{ not json',
  dotfile: 'no id',
};
const ITEMS = [
  ['/shared/theme.css', 'theme.css'],
  ['/shared/c-first.js', 'c-first.js'],
  ['/shared/settings.json', 'settings.json'],
  ['/shared/a-second.js', 'a-second.js'],
  ['/shared/more.css', 'more.css'],
  ['/shared/frag.html', 'frag.html'],
  ['/shared/page.htm', 'page.htm'],
  ['/shared/data.xml', 'data.xml'],
  ['/shared/notes.md', 'notes.md'],
  ['/shared/missing.txt', 'does-not-exist.txt'],
  ['/shared/plain.txt', 'plain.txt'],
  ['/shared/table.csv', 'table.csv'],
  ['/shared/b-third.js', 'b-third.js'],
  ['/shared/config.yaml', 'config.yaml'],
  ['/shared/LICENSE', 'LICENSE'],
  ['/shared/LOUD.CSS', 'LOUD.CSS'],
  ['/shared/my-app.settings.json', 'my-app.settings.json'],
  ['/shared/dup/settings.xml', 'other-settings.xml'],
  ['/shared/broken.json', 'broken.json'],
  ['/shared/gone.js', 'does-not-exist.js'],
  ['/shared/.dotfile', 'dotfile'],
].map(([requestPath, file]) => ({ requestPath: requestPath!, hostFilePath: `../shared/${file}` }));

const page = (loaderAttributes: string, body = '<h1>probe</h1>') =>
  `<!doctype html><html><head><meta charset="utf-8"><title>probe</title>
<script src="/lib/ack.loader.js" ${loaderAttributes}></script>
<script src="/probe.js"></script>
</head><body>${body}</body></html>`;

// Records, from the page's own script that runs after the loader tag, that the page started and
// how the end was announced.
const PROBE = `window.probe = { started: true };
document.addEventListener('ack:shared-files-loaded', function (e) { window.probe.event = e.detail; });
if (window.AckLoader) AckLoader.ready.then(function (r) { window.probe.ready = r; });
`;

const JOINED = `window.lists = { styles: ['/own.css'], scripts: ['/own.js'] };
AckLoader.joinSharedFiles(window.lists.styles, window.lists.scripts).then(function (r) { window.lists.result = r; });
`;

const ESM = `import * as loader from '/lib/ack.loader.mjs';
window.esm = { loaded: true };
loader.start().then(function (r) { window.esm.result = r; });
`;

/** How the module in front of wwwroot answers the manifest path: pass, 500, a non-JSON body, a JSON object. */
let manifestAnswer: 'pass' | '500' | 'invalid' | 'object' | 'odd entries' = 'pass';
const ODD_ENTRIES = [
  { requestPath: '//127.0.0.1:9/evil.js' },
  { requestPath: 5 },
  null,
  'x.js',
  { requestPath: '/shared/plain.txt' },
];
const manifestGate: AckModuleFactory = () => ({
  public: [
    (req, res, next) => {
      // A script that holds the parser for a while, so the loader's fetches finish before the rest
      // of the page is parsed (the case where an element further down takes an asset's ID).
      if (req.ack.rawPath === '/parser-held.js') {
        setTimeout(() => {
          res.setHeader('Content-Type', 'text/javascript');
          res.end('window.parserHeld = true;');
        }, 400);
        return;
      }
      if (req.ack.rawPath !== '/shared-files/manifest' || manifestAnswer === 'pass') return next();
      res.statusCode = manifestAnswer === '500' ? 500 : 200;
      res.setHeader('Content-Type', 'application/json');
      const bodies = {
        '500': '{"status":500}',
        invalid: '[{"requestPath": "/shared/theme.css"',
        object: '{"items":[]}',
        'odd entries': JSON.stringify(ODD_ENTRIES),
      };
      res.end(bodies[manifestAnswer]);
    },
  ],
});

type Home = Awaited<ReturnType<typeof startLoaderHome>>;
let browser: Browser;
let home: Home;
let current: ObservedPage | undefined;

beforeAll(async () => {
  [browser, home] = await Promise.all([
    launchChromium(),
    startLoaderHome({
      shared: SHARED,
      items: ITEMS,
      before: { manifestgate: manifestGate },
      pages: {
        'probe.js': PROBE,
        'joined.js': JOINED,
        'esm.js': ESM,
        'auto.html': page('data-ack-autoload'),
        // The page links the shared theme itself, to paint styled from its first frame.
        'linked.html': page('data-ack-autoload').replace(
          '<script src="/lib',
          '<link rel="stylesheet" href="/shared/theme.css">\n<script src="/lib',
        ),
        'prefixed.html': page('data-ack-autoload data-ack-id-prefix="shared_"'),
        'clash.html': page(
          'data-ack-autoload',
          '<h1>probe</h1><script src="/parser-held.js"></script><div id="plain">page element</div>',
        ),
        'joined.html': page('', '<h1>probe</h1><script src="/joined.js"></script>'),
        'esm.html':
          '<!doctype html><html><head><script type="module" src="/esm.js"></script></head><body><h1>esm</h1></body></html>',
      },
    }),
  ]);
});
afterAll(async () => {
  await Promise.all([browser?.close(), home?.close()]);
});
afterEach(async () => {
  manifestAnswer = 'pass';
  await current?.page.close();
  current = undefined;
});

/** Opens a page and waits until both the `ready` promise and the DOM event announced the end. */
async function openAndWait(path: string): Promise<Page> {
  current = await observedPage(browser);
  await current.page.goto(`${home.url}${path}`);
  const { page: p, console: lines, pageErrors } = current;
  await p
    .waitForFunction(
      () => {
        const probe = (window as unknown as { probe?: { ready?: unknown; event?: unknown } }).probe;
        return Boolean(probe?.ready && probe.event);
      },
      undefined,
      { timeout: 15_000 },
    )
    .catch((e: Error) => {
      throw new Error(`${e.message}\nconsole: ${lines.join('\n')}\npage errors: ${pageErrors.join('\n')}`);
    });
  return p;
}

interface LogEntry {
  level: string;
  message: string;
  url?: string;
}
const loaderLog = (p: Page) =>
  p.evaluate(() => (window as unknown as { AckLoader: { log: LogEntry[] } }).AckLoader.log);
const probe = (p: Page) =>
  p.evaluate(
    () =>
      (window as unknown as { probe: { started: boolean; ready: { log: LogEntry[] }; event: { log: LogEntry[] } } })
        .probe,
  );

describe('standalone (data-ack-autoload)', () => {
  it('adds the styles as <link rel="stylesheet"> in manifest order, and they apply', async () => {
    const p = await openAndWait('/auto.html');
    const links = await p.evaluate(() =>
      [...document.querySelectorAll('link[rel="stylesheet"]')].map((l) => l.getAttribute('href')),
    );
    expect(links).toEqual(['/shared/theme.css', '/shared/more.css']);
    // theme.css colours the heading; more.css, later in the manifest, wins the letter-spacing.
    const h1 = await p.evaluate(() => {
      const s = getComputedStyle(document.querySelector('h1')!);
      return { color: s.color, letterSpacing: s.letterSpacing };
    });
    expect(h1).toEqual({ color: 'rgb(0, 128, 0)', letterSpacing: '3px' });
  });

  it('does not link a style the page already links; it still reports it, and the others join', async () => {
    const p = await openAndWait('/linked.html');
    const links = await p.evaluate(() =>
      [...document.querySelectorAll('link[rel="stylesheet"]')].map((l) => l.getAttribute('href')),
    );
    expect(links).toEqual(['/shared/theme.css', '/shared/more.css']);
    expect((await probe(p)).ready).toMatchObject({ styles: ['/shared/theme.css', '/shared/more.css'] });
    const h1 = await p.evaluate(() => getComputedStyle(document.querySelector('h1')!).letterSpacing);
    expect(h1).toBe('3px');
  });

  it('runs the shared scripts in manifest order, before the end is announced', async () => {
    const p = await openAndWait('/auto.html');
    const scripts = await p.evaluate(() =>
      [...document.querySelectorAll('script[src^="/shared/"]')].map((s) => s.getAttribute('src')),
    );
    expect(scripts).toEqual(['/shared/c-first.js', '/shared/a-second.js', '/shared/b-third.js', '/shared/gone.js']);
    expect(await p.evaluate(() => (window as unknown as { sharedOrder: string[] }).sharedOrder)).toEqual([
      'c-first',
      'a-second',
      'b-third',
    ]);
  });

  it('adds every other file to <head> as an inert text asset with the type of the table and its ID', async () => {
    const p = await openAndWait('/auto.html');
    const assets = await textAssetsOf(p);
    expect(assets.map(({ id, type, src }) => ({ id, type, src }))).toEqual([
      { id: 'settings', type: 'application/json', src: '/shared/settings.json' },
      { id: 'frag', type: 'text/html', src: '/shared/frag.html' },
      { id: 'page', type: 'text/html', src: '/shared/page.htm' },
      { id: 'data', type: 'application/xml', src: '/shared/data.xml' },
      { id: 'notes', type: 'text/markdown', src: '/shared/notes.md' },
      { id: 'plain', type: 'text/plain', src: '/shared/plain.txt' },
      { id: 'table', type: 'text/csv', src: '/shared/table.csv' },
      { id: 'config', type: 'text/plain', src: '/shared/config.yaml' },
      { id: 'LICENSE', type: 'text/plain', src: '/shared/LICENSE' },
      { id: 'LOUD', type: 'text/plain', src: '/shared/LOUD.CSS' },
      { id: 'my_app_settings', type: 'application/json', src: '/shared/my-app.settings.json' },
    ]);
    // Content, read through the ID as a screen does, is the file byte for byte (UTF-8 too).
    const read = await p.evaluate(
      (ids) => ids.map((id) => document.getElementById(id)?.textContent),
      assets.map((a) => a.id),
    );
    expect(read).toEqual([
      SHARED['settings.json'],
      SHARED['frag.html'],
      SHARED['page.htm'],
      SHARED['data.xml'],
      SHARED['notes.md'],
      SHARED['plain.txt'],
      SHARED['table.csv'],
      SHARED['config.yaml'],
      SHARED['LICENSE'],
      SHARED['LOUD.CSS'],
      SHARED['my-app.settings.json'],
    ]);
    expect(await p.evaluate(() => JSON.parse(document.getElementById('settings')!.textContent!))).toEqual({
      pageSize: 25,
      title: 'Grüße, 안녕',
    });
    // Inert: the markup inside a text/html asset did not run.
    expect(await p.evaluate(() => (window as unknown as { injected?: boolean }).injected)).toBeUndefined();
    expect(current!.pageErrors).toEqual([]);
  });

  it('treats .CSS in upper case as a text asset, not a style sheet', async () => {
    const p = await openAndWait('/auto.html');
    expect(await p.evaluate(() => document.querySelector('link[href="/shared/LOUD.CSS"]'))).toBeNull();
    expect(await p.evaluate(() => document.getElementById('LOUD')?.getAttribute('type'))).toBe('text/plain');
    expect(await p.evaluate(() => getComputedStyle(document.querySelector('h1')!).color)).not.toBe('rgb(255, 0, 0)');
  });

  it('logs a text file answering 404, a duplicate ID, invalid JSON, a failed script and a name without ID; loads the rest', async () => {
    const p = await openAndWait('/auto.html');
    const log = await loaderLog(p);
    // Problems found while reading the manifest come first, then those of the downloads.
    expect(log.slice(0, 2).map((e) => [e.level, e.url])).toEqual([
      ['error', '/shared/dup/settings.xml'],
      ['warn', '/shared/.dotfile'],
    ]);
    expect(
      log
        .slice(2)
        .map((e) => [e.level, e.url])
        .sort(),
    ).toEqual([
      ['error', '/shared/broken.json'],
      ['error', '/shared/gone.js'],
      ['error', '/shared/missing.txt'],
    ]);
    const about = (suffix: string) => log.find((e) => e.url?.endsWith(suffix))!.message;
    expect(about('/shared/missing.txt')).toMatch(/"missing".*HTTP 404/);
    expect(about('/shared/dup/settings.xml')).toMatch(/duplicate ID "settings"/);
    expect(about('/shared/broken.json')).toMatch(/"broken" not loaded/);
    expect(about('/shared/gone.js')).toMatch(/not loaded/);
    // Neither the 404 nor the broken JSON nor the duplicate made an element; the first `settings` stays.
    const present = await p.evaluate(() => ({
      missing: document.getElementById('missing'),
      broken: document.getElementById('broken'),
      settings: document.querySelectorAll('#settings').length,
      settingsType: document.getElementById('settings')!.getAttribute('type'),
    }));
    expect(present).toEqual({ missing: null, broken: null, settings: 1, settingsType: 'application/json' });
    // The same log reaches the page through the promise and the event, and the console.
    const { ready, event } = await probe(p);
    expect(ready.log).toEqual(log);
    expect(event.log).toEqual(log);
    expect(current!.console.filter((line) => line.includes('[ack loader]'))).toHaveLength(5);
  });

  it('reports an ID already taken by an element of the page, and leaves that element alone', async () => {
    const p = await openAndWait('/clash.html');
    expect(await p.evaluate(() => document.getElementById('plain')!.textContent)).toBe('page element');
    expect((await loaderLog(p)).find((e) => e.url === '/shared/plain.txt')?.message).toMatch(/duplicate ID "plain"/);
  });

  it('puts the prefix setting in front of every ID (shared_ for screens written for the original)', async () => {
    const p = await openAndWait('/prefixed.html');
    const ids = (await textAssetsOf(p)).map((a) => a.id);
    expect(ids).toContain('shared_settings');
    expect(ids).toContain('shared_notes');
    expect(ids.every((id) => id.startsWith('shared_'))).toBe(true);
  });

  it('reads the manifest and files from data-ack-base-url (a host under another origin or prefix)', async () => {
    home.writePage('based.html', page(`data-ack-autoload data-ack-base-url="${home.url}/"`));
    const p = await openAndWait('/based.html');
    const links = await p.evaluate(() =>
      [...document.querySelectorAll('link[rel="stylesheet"]')].map((l) => l.getAttribute('href')),
    );
    expect(links).toEqual([`${home.url}/shared/theme.css`, `${home.url}/shared/more.css`]);
    expect((await textAssetsOf(p)).find((a) => a.id === 'settings')?.src).toBe(`${home.url}/shared/settings.json`);
  });
});

describe('manifest failures: logged, the page still starts', () => {
  const expectStartedWithManifestProblem = async (p: Page, message: RegExp) => {
    const { started, ready, event } = await probe(p);
    expect(started).toBe(true);
    expect(ready).toEqual(event);
    expect(ready.log).toHaveLength(1);
    expect(ready.log[0]!.message).toMatch(message);
    expect(ready.log[0]!.url).toMatch(/\/shared-files\/manifest$/);
    expect(await loaderLog(p)).toEqual(ready.log);
    expect(await textAssetsOf(p)).toEqual([]);
    expect(await p.textContent('h1')).toBe('probe');
    expect(current!.pageErrors).toEqual([]);
  };

  it('manifest answering 500', async () => {
    manifestAnswer = '500';
    await expectStartedWithManifestProblem(await openAndWait('/auto.html'), /manifest not loaded: HTTP 500/);
  });

  it('manifest that is not valid JSON', async () => {
    manifestAnswer = 'invalid';
    await expectStartedWithManifestProblem(await openAndWait('/auto.html'), /manifest not loaded: .*JSON/);
  });

  it('manifest that is JSON but not an array', async () => {
    manifestAnswer = 'object';
    await expectStartedWithManifestProblem(await openAndWait('/auto.html'), /manifest not loaded: not a JSON array/);
  });

  it('manifest unreachable (nothing listening at the base URL)', async () => {
    const port = await freePort();
    home.writePage('unreachable.html', page(`data-ack-autoload data-ack-base-url="http://127.0.0.1:${port}"`));
    await expectStartedWithManifestProblem(await openAndWait('/unreachable.html'), /manifest not loaded: /);
  });
});

describe('manifest entries that are not local paths', () => {
  it('skips them with a warning (never loads from another origin) and joins the rest', async () => {
    manifestAnswer = 'odd entries';
    const p = await openAndWait('/auto.html');
    const log = await loaderLog(p);
    expect(log.map((e) => [e.level, e.message])).toEqual([
      ['warn', 'manifest entry skipped: {"requestPath":"//127.0.0.1:9/evil.js"}'],
      ['warn', 'manifest entry skipped: {"requestPath":5}'],
      ['warn', 'manifest entry skipped: null'],
      ['warn', 'manifest entry skipped: "x.js"'],
    ]);
    expect(await p.evaluate(() => document.querySelectorAll('script[src*="evil"]').length)).toBe(0);
    expect((await textAssetsOf(p)).map((a) => a.id)).toEqual(['plain']);
  });
});

describe('joined to an existing screen loader', () => {
  it('joinSharedFiles adds the manifest entries to the given lists and loads the text assets only', async () => {
    current = await observedPage(browser);
    const p = current.page;
    await p.goto(`${home.url}/joined.html`);
    await p.waitForFunction(
      () => Boolean((window as unknown as { lists?: { result?: unknown } }).lists?.result),
      undefined,
      { timeout: 10_000 },
    );
    const lists = await p.evaluate(
      () => (window as unknown as { lists: { styles: string[]; scripts: string[] } }).lists,
    );
    expect(lists.styles).toEqual(['/own.css', '/shared/theme.css', '/shared/more.css']);
    expect(lists.scripts).toEqual([
      '/own.js',
      '/shared/c-first.js',
      '/shared/a-second.js',
      '/shared/b-third.js',
      '/shared/gone.js',
    ]);
    expect((await textAssetsOf(p)).map((a) => a.id)).toContain('settings');
    // Styles and scripts are the screen loader's to load: none were added or run, and without the
    // attribute the bundle did not start on its own.
    const untouched = await p.evaluate(() => ({
      links: document.querySelectorAll('link').length,
      order: (window as unknown as { sharedOrder?: string[] }).sharedOrder,
    }));
    expect(untouched).toEqual({ links: 0, order: undefined });
  });

  it('the ES module build works the same way (start)', async () => {
    current = await observedPage(browser);
    const p = current.page;
    await p.goto(`${home.url}/esm.html`);
    await p.waitForFunction(
      () => Boolean((window as unknown as { esm?: { result?: unknown } }).esm?.result),
      undefined,
      { timeout: 10_000 },
    );
    expect(await p.evaluate(() => (window as unknown as { sharedOrder: string[] }).sharedOrder)).toEqual([
      'c-first',
      'a-second',
      'b-third',
    ]);
    expect((await textAssetsOf(p)).map((a) => a.id)).toContain('settings');
    expect(await p.evaluate(() => getComputedStyle(document.querySelector('h1')!).color)).toBe('rgb(0, 128, 0)');
  });
});

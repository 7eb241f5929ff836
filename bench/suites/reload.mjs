// Live-reload latency: an open screen in a real Chromium (playwright-core driving Debian's
// /usr/bin/chromium, as the browser tests do), its stylesheet pushed with the sync upload
// endpoint; the latency is from the upload's answer to the new style applied in the page (its
// computed colour changed, seen at the DOM change or the stylesheet's load event, stamped with
// the page's own clock, which is the machine's, as Node's is). p50 and p95 over the swaps;
// measured, never asserted. Goal: p95 < 50 ms on loopback.
/* global window, document, getComputedStyle, MutationObserver -- the page's, in page.evaluate */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { prepareFiles } from '../lib/files.mjs';
import { startNode } from '../lib/servers.mjs';
import { docFile, writeSuiteSection } from '../lib/doc-sections.mjs';
import { fmt } from '../lib/stats.mjs';

const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const repo = path.resolve(here, '..');
const SWAPS = Math.max(5, Number(process.env.BENCH_RELOAD_SWAPS ?? 50));
const TOKEN = 'bench-reload-token';
const CHROMIUM = process.env.ACK_CHROMIUM_PATH?.trim() || '/usr/bin/chromium';

export const id = 'reload';
export const cellIds = ['reload-css'];

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

/** The bench home plus a contract screen that links its stylesheet and starts the loader. */
function screenHome(files) {
  const put = (rel, text) => {
    const p = path.join(files.home, rel);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, text);
  };
  const moduleJson = path.join(files.home, 'modules/wwwroot/module.json');
  const module = JSON.parse(fs.readFileSync(moduleJson, 'utf8'));
  module.ModuleConfig.FileSyncTokens = [TOKEN];
  fs.writeFileSync(moduleJson, JSON.stringify(module, null, 2));
  put('www/lib/ack.loader.js', fs.readFileSync(path.join(repo, 'packages/loader/dist/ack.loader.js'), 'utf8'));
  put('contracts/wwwroot/HDS/screen.css', '#title { color: rgb(0, 0, 255) }');
  put(
    'contracts/wwwroot/HDS/screen.html',
    '<!doctype html><html><head><link rel="stylesheet" href="/view/screen.css">' +
      '<script src="/lib/ack.loader.js" data-ack-autoload></script></head><body><h1 id="title">bench</h1></body></html>',
  );
}

async function upload(url, css) {
  const form = new FormData();
  form.append('moduleName', 'wwwroot');
  form.append('changeType', 'Changed');
  form.append('filePath', 'HDS/screen.css');
  form.append('file', new Blob([css]), 'screen.css');
  const res = await fetch(`${url}/wwwroot/api/sync/upload`, {
    method: 'POST',
    body: form,
    headers: { authorization: `Basic ${Buffer.from(`${TOKEN}:`).toString('base64')}` },
  });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`upload answered ${res.status}`);
  return performance.timeOrigin + performance.now();
}

export async function run() {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM} (Debian: chromium)`);
  const { chromium } = createRequire(path.join(repo, 'packages/loader/package.json'))('playwright-core');
  const files = prepareFiles(path.join(here, '.work'), repo);
  screenHome(files);
  const ack = await startNode('ack', path.join(here, 'servers/ack.mjs'), [files.layoutFile]);
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  try {
    const page = await browser.newPage();
    await page.goto(`${ack.url}/view/screen.html`);
    await page.evaluate(() => window.AckLoader.ready);
    // Every change of the title's colour, stamped on the machine's clock.
    await page.evaluate(() => {
      const title = document.getElementById('title');
      window.swaps = {};
      const check = () => {
        const color = getComputedStyle(title).color;
        window.swaps[color] ??= performance.timeOrigin + performance.now();
      };
      new MutationObserver(check).observe(document, { subtree: true, childList: true, attributes: true });
      document.addEventListener('load', check, true);
    });
    await new Promise((r) => setTimeout(r, 500)); // the loader's socket is open
    const latencies = [];
    for (let i = 1; i <= SWAPS; i++) {
      const color = `rgb(${i % 256}, ${Math.floor(i / 256)}, 1)`;
      const answered = await upload(ack.url, `#title { color: ${color} }`);
      await page.waitForFunction((c) => window.swaps[c] !== undefined, color, { timeout: 10_000, polling: 5 });
      const swapped = await page.evaluate((c) => window.swaps[c], color);
      latencies.push(swapped - answered);
      if (i % 10 === 0) console.log(`  ${i} swaps, last ${fmt(swapped - answered, 1)} ms`);
    }
    const sorted = [...latencies].sort((a, b) => a - b);
    const p50 = percentile(sorted, 50);
    const p95 = percentile(sorted, 95);
    const table = [
      '| swaps | p50 (ms) | p95 (ms) | max (ms) | goal |',
      '|---|---|---|---|---|',
      `| ${SWAPS} | ${fmt(p50, 1)} | ${fmt(p95, 1)} | ${fmt(sorted.at(-1), 1)} | p95 < 50 ms: ${p95 < 50 ? 'met' : '**not met**'} |`,
    ].join('\n');
    console.log(`\n${table}\n`);
    if (!process.env.BENCH_NO_DOCS) {
      writeSuiteSection(docFile(repo), id, section(table, browser.version()));
      console.log('bench reload: wrote its section of docs/benchmarks.md');
    }
  } finally {
    await browser.close();
    await ack.stop();
  }
}

function section(table, chromiumVersion) {
  return `## Live-reload latency

Generated by \`BENCH_ONLY=reload pnpm bench\` (\`bench/suites/reload.mjs\`) on ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}, Node ${process.version}, Chromium ${chromiumVersion}; ${SWAPS} swaps (\`BENCH_RELOAD_SWAPS\`).

- Our host (the static suite's home, development settings, so live reload is on) serves a
  contract screen that links \`/view/screen.css\` and starts the loader; headless Chromium
  (playwright-core, Debian's \`/usr/bin/chromium\`) opens it.
- Each swap uploads a stylesheet with a new colour through the sync upload endpoint
  (\`POST /wwwroot/api/sync/upload\`, what \`ack sync upload\` sends) and takes the time when its
  200 has been read; the page stamps the moment its title's computed colour changes (checked at
  every DOM change and every load event of the page, so no polling interval enters the figure).
  Both stamps are the machine's clock (Node's and the page's \`performance.timeOrigin + now()\`);
  the latency is their difference. A swap the page applies before the upload's answer is read
  counts as negative.
- Goal: p95 < 50 ms on loopback; measured, not asserted.

${table}`;
}

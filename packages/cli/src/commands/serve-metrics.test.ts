import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { freePort, useTestHosts } from '@ack/host/test-support';
import { startAckServe, type ServingAck } from '../test-support/spawn-ack.js';

// One scrape answers for the whole host (docs/operations.md "Metrics"): a real Prometheus scrapes
// a real `ack serve --workers 2` with the Bearer credential; the request count it stores is the
// sum over both workers, and the scrape passes `promtool check metrics`.
const hosts = useTestHosts();
const KEY = 'metrics-scrape-key';
const N = 40;
const children: ChildProcess[] = [];
const folders: string[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }
  for (const folder of folders.splice(0)) fs.rmSync(folder, { recursive: true, force: true });
});

async function serveWorkers(): Promise<ServingAck> {
  const home = hosts.home(
    { AppSettings: { LoadModules: ['wwwroot'], HostAccessID: KEY } },
    {
      'modules/wwwroot/module.json': { ModuleID: 'wwwroot', ModuleConfig: {} },
      'modules/wwwroot/wwwroot/hello.txt': 'hello',
    },
  );
  const served = await startAckServe([
    '--app-dir',
    home.appDir,
    '--port',
    '0',
    '--host',
    '127.0.0.1',
    '--workers',
    '2',
  ]);
  children.push(served.child);
  await vi.waitFor(() => expect(served.output().match(/primary \d+: worker \d+ listening/g)?.length ?? 0).toBe(2), {
    timeout: 60_000,
    interval: 100,
  });
  return served;
}

const readOperationsDoc = () =>
  fs.readFileSync(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../docs/operations.md'), 'utf8');

/** The Prometheus scrape config of docs/operations.md "Metrics", verbatim. */
function documentedScrapeConfig(): string {
  const doc = readOperationsDoc();
  const block = /```yaml\n(scrape_configs:\n[\s\S]*?)```/.exec(doc)?.[1];
  if (!block) throw new Error('docs/operations.md has no scrape_configs block');
  for (const part of ['your-host-access-id', "'127.0.0.1:8421'", 'scrape_interval: 15s'])
    if (!block.includes(part)) throw new Error(`the documented block no longer has ${part}`);
  return block;
}

/** The rows of docs/operations.md's table of the original's names: each name and its type. */
function originalNames(): { name: string; type: string }[] {
  return [...readOperationsDoc().matchAll(/^\| `(handstack_[a-z_]+)` \| (counter|gauge|histogram) \|/gm)].map((m) => ({
    name: m[1]!,
    type: m[2]!,
  }));
}

async function startPrometheus(target: string): Promise<string> {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-prometheus-'));
  folders.push(folder);
  const config = path.join(folder, 'prometheus.yml');
  // The block of docs/operations.md as written; only the key, the address and the interval are the test's.
  fs.writeFileSync(
    config,
    documentedScrapeConfig()
      .replace('your-host-access-id', KEY)
      .replace("'127.0.0.1:8421'", `'${target}'`)
      .replace('scrape_interval: 15s', 'scrape_interval: 1s'),
  );
  const port = await freePort();
  const child = spawn(
    'prometheus',
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${path.join(folder, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  children.push(child);
  let log = '';
  child.stderr!.on('data', (d: Buffer) => (log = (log + d.toString()).slice(-4000)));
  const url = `http://127.0.0.1:${port}`;
  await vi.waitFor(
    async () => {
      expect(child.exitCode, log).toBeNull();
      expect((await fetch(`${url}/-/ready`)).status).toBe(200);
    },
    { timeout: 30_000, interval: 200 },
  );
  return url;
}

/** One value of an instant query; NaN when the query has no sample yet. */
async function query(prometheus: string, expr: string): Promise<number> {
  const res = await fetch(`${prometheus}/api/v1/query?query=${encodeURIComponent(expr)}`);
  const body = (await res.json()) as { data: { result: { value: [number, string] }[] } };
  const first = body.data.result[0];
  return first ? Number(first.value[1]) : NaN;
}

describe('Prometheus scraping ack serve --workers 2', () => {
  it(
    'stores the sum of both workers: N requests are N, up is 1, each worker gives its id, every documented original name is scraped, and promtool passes',
    { timeout: 180_000 },
    async () => {
      const served = await serveWorkers();
      const prometheus = await startPrometheus(new URL(served.url).host);
      await vi.waitFor(async () => expect(await query(prometheus, 'up{job="ack"}')).toBe(1), {
        timeout: 30_000,
        interval: 250,
      });

      // A new connection each: the primary spreads connections over the workers.
      for (let i = 0; i < N; i++) {
        const res = await fetch(`${served.url}/hello.txt`, { headers: { Connection: 'close' } });
        expect(res.status).toBe(200);
        await res.arrayBuffer();
      }
      const staticCount = 'sum(http_server_request_duration_seconds_count{job="ack",http_route="static"})';
      let last = NaN;
      await vi
        .waitFor(
          async () => {
            last = await query(prometheus, staticCount);
            expect(last).toBe(N);
          },
          { timeout: 30_000, interval: 250 },
        )
        .catch(() => expect(last, 'the static requests Prometheus stored').toBe(N));
      // Every request is counted once: the static ones and Prometheus's own scrapes, whichever
      // worker took them (the scrape being answered counts in the total before it ends).
      expect(
        await query(
          prometheus,
          'handstack_requests_total{job="ack"} - on() sum(http_server_request_duration_seconds_count{job="ack"})',
        ),
      ).toBeGreaterThanOrEqual(1);
      expect(await query(prometheus, 'up{job="ack"}')).toBe(1);
      // Both workers serve (the primary hands new connections round the workers): the figures above
      // are the sum of two processes, not one worker's.
      // Each says which worker it is (docs/operations.md "Diagnostics"): the cluster's worker id.
      const workers = new Map<number, unknown>();
      for (let i = 0; i < 6; i++) {
        const res = await fetch(`${served.url}/diagnostics`, { headers: { hostAccessID: KEY, Connection: 'close' } });
        const body = (await res.json()) as { process: { processId: number }; hosting: { workerId: unknown } };
        workers.set(body.process.processId, body.hosting.workerId);
      }
      expect(workers.size).toBe(2);
      const ids = [...workers.values()];
      for (const id of ids) expect(Number.isInteger(id) && (id as number) > 0, `workerId ${String(id)}`).toBe(true);
      expect(new Set(ids).size).toBe(2);

      const scrape = await fetch(`${served.url}/metrics`, { headers: { Authorization: `Bearer ${KEY}` } });
      expect(scrape.status).toBe(200);
      const text = await scrape.text();
      // Every name of the original's table in docs/operations.md is in the scrape, with its type.
      const documented = originalNames();
      expect(documented.length).toBeGreaterThanOrEqual(10);
      const missing = documented.filter(({ name, type }) => !text.includes(`# TYPE ${name} ${type}\n`));
      expect(missing, 'documented names absent from the scrape').toEqual([]);
      const check = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
      expect(check.stdout + check.stderr).toBe('');
      expect(check.status).toBe(0);
    },
  );
});

import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { testAppSettings, useTestHosts } from '@ack/host/test-support';
import { wwwrootModule } from '@ack/wwwroot';
import { useCleanups } from '../../test-support/cleanups.js';
import { workDir } from '../../test-support/work.js';
import { pushPlan, SharedBatches, type PushResult } from './batch-push.js';
import type { LocalFile } from './delta-plan.js';
import { scanFolder } from './files.js';
import { DEFAULT_REQUEST } from './http.js';

// A batch push (docs/sync.md "Batches") against a real host: a file that cannot be read when its
// batch is built (gone since the folder was read, made a folder) fails alone; the rest of its
// batch lands.

const TOKEN = 'batch-push-token';
const hosts = useTestHosts();
const cleanups = useCleanups();

async function host() {
  const home = hosts.home(testAppSettings({ AppSettings: { LoadModules: ['wwwroot'] } }), {
    'modules/wwwroot/module.json': { ModuleID: 'wwwroot', ModuleConfig: { FileSyncTokens: [TOKEN] } },
  });
  const running = await hosts.start(home, { wwwroot: wwwrootModule });
  return { ...running, contracts: path.join(home.home, 'contracts', 'wwwroot') };
}

/** The folder's files, as a push plans them: every one to create under `APP/`. */
async function planOf(dir: string): Promise<LocalFile[]> {
  return (await scanFolder(dir)).map((scanned) => ({
    file: scanned.abs,
    remotePath: `APP/${scanned.rel}`,
    size: scanned.size,
    scanned,
  }));
}

const OFFER = { path: '/wwwroot/api/sync/batch', maxFiles: 1000, maxFileBytes: 1 << 20, maxBodyBytes: null };

/** Pushes `created` to the host in batches, two at a time; `onDone` hears each result. */
const pushAll = (
  url: string,
  created: LocalFile[],
  onDone: (r: PushResult) => void = () => undefined,
  shared?: SharedBatches,
) =>
  pushPlan(
    url,
    TOKEN,
    'wwwroot',
    { created, changed: [], unchanged: 0, deleted: [] },
    OFFER,
    DEFAULT_REQUEST,
    2,
    onDone,
    undefined,
    shared,
  );

describe('pushPlan in batches', () => {
  it('fails only the files that cannot be read when their batch is built; the others of the batch land', async () => {
    const h = await host();
    const dir = workDir(cleanups, { 'a.html': 'a', 'gone.html': 'g', 'b.js': 'b', 'now-a-folder.css': 'c' });
    const created = await planOf(dir);
    fs.rmSync(path.join(dir, 'gone.html'));
    fs.rmSync(path.join(dir, 'now-a-folder.css'));
    fs.mkdirSync(path.join(dir, 'now-a-folder.css'));
    const heard: PushResult[] = [];
    const results = await pushAll(h.url, created, (r) => heard.push(r));
    const byPath = Object.fromEntries(results.map((r) => [r.path, r]));
    expect(byPath['APP/a.html']).toMatchObject({ ok: true, change: 'Created' });
    expect(byPath['APP/b.js']).toMatchObject({ ok: true, change: 'Created' });
    expect(byPath['APP/gone.html']).toMatchObject({ ok: false, error: expect.stringMatching(/cannot read.*ENOENT/) });
    expect(byPath['APP/now-a-folder.css']).toMatchObject({
      ok: false,
      error: expect.stringMatching(/cannot read.*EISDIR/),
    });
    expect(heard).toHaveLength(4);
    expect(fs.readdirSync(path.join(h.contracts, 'APP')).sort()).toEqual(['a.html', 'b.js']);
  });

  it('sends no request for a batch none of whose files can be read, and reports each', async () => {
    const h = await host();
    const dir = workDir(cleanups, { 'x.html': 'x' });
    const created = await planOf(dir);
    fs.rmSync(path.join(dir, 'x.html'));
    const results = await pushAll(h.url, created);
    expect(results).toEqual([expect.objectContaining({ path: 'APP/x.html', ok: false })]);
    expect(fs.existsSync(path.join(h.contracts, 'APP'))).toBe(false);
  });

  it('shares built batches between hosts, keeps none once every host took it, and past its bound builds again', async () => {
    const [a, b] = [await host(), await host()];
    // 600 files of 10 KB: batches of at most 500 files (the batch's own bound), so two.
    const dir = workDir(
      cleanups,
      Object.fromEntries(Array.from({ length: 600 }, (_, i) => [`f${i}.html`, `${i}`.padEnd(10 * 1024, '.')])),
    );
    const created = await planOf(dir);
    for (const bound of [64 << 20, 0]) {
      const shared = new SharedBatches(2, bound);
      const [ra, rb] = await Promise.all([a, b].map((h) => pushAll(h.url, created, undefined, shared)));
      for (const results of [ra!, rb!]) {
        expect(results).toHaveLength(600);
        expect(results.every((r) => r.ok && r.sha256 !== undefined)).toBe(true);
      }
      // Each file confirmed with the digest of the bytes sent, the same on both hosts.
      expect(rb!.map((r) => r.sha256)).toEqual(ra!.map((r) => r.sha256));
      expect(shared.heldBytes).toBe(0);
      for (const h of [a, b]) expect(fs.readdirSync(path.join(h.contracts, 'APP'))).toHaveLength(600);
    }
  });
});

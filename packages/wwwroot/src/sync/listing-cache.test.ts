import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { testAppSettings, useTestHosts } from '@ack/host/test-support';
import { wwwrootModule } from '../index.js';
import { basicAuth } from '../test-support/test-fixture.js';

// The listing's digest cache (docs/sync.md "The listing", "Speed"): a file is listed from the
// cache only while its facts are those it was hashed under, and its kept line names it as the
// listing asked for it.

const TOKEN = 'listing-cache-token';
const sha = (data: string) => createHash('sha256').update(data).digest('hex');
const hosts = useTestHosts();

async function start(files: Record<string, string>, more: Record<string, object> = {}) {
  const home = hosts.home(testAppSettings({ AppSettings: { LoadModules: ['wwwroot'] } }), {
    'modules/wwwroot/module.json': { ModuleID: 'wwwroot', ModuleConfig: { FileSyncTokens: [TOKEN] } },
    ...more,
    ...Object.fromEntries(Object.entries(files).map(([k, v]) => [`contracts/wwwroot/${k}`, v])),
  });
  const { url } = await hosts.start(home, { wwwroot: wwwrootModule });
  const at = (...parts: string[]) => path.join(home.home, 'contracts', 'wwwroot', ...parts);
  /** The listing's file lines, as text (the closing line left out). */
  const list = async (query = 'moduleName=wwwroot') => {
    const res = await fetch(`${url}/wwwroot/api/sync/list?${query}`, { headers: { Authorization: basicAuth(TOKEN) } });
    expect(res.status).toBe(200);
    const lines = (await res.text()).split('\n').filter(Boolean);
    expect(JSON.parse(lines.pop()!)).toMatchObject({ done: true, files: lines.length });
    return lines;
  };
  return { at, list };
}

const line = (p: string, content: string) =>
  JSON.stringify({ path: p, size: Buffer.byteLength(content), sha256: sha(content) });

describe('the sync listing from its digest cache', () => {
  it('re-hashes a file replaced by a rename, even with its size and modification time kept', async () => {
    const h = await start({ 'HDS/a.html': 'one', 'HDS/b.html': 'bee' });
    const target = h.at('HDS', 'a.html');
    fs.utimesSync(target, 1_700_000_000, 1_700_000_000);
    expect(await h.list()).toEqual([line('HDS/a.html', 'one'), line('HDS/b.html', 'bee')]);
    const staged = h.at('HDS', 'staged');
    fs.writeFileSync(staged, 'two');
    fs.utimesSync(staged, 1_700_000_000, 1_700_000_000);
    fs.renameSync(staged, target);
    expect(await h.list()).toEqual([line('HDS/a.html', 'two'), line('HDS/b.html', 'bee')]);
  });

  it('leaves out a removed file and adds a new one, in the root folder as in others', async () => {
    const h = await start({ 'top.html': 'top', 'HDS/a.html': 'one', 'HDS/b.html': 'bee' });
    expect(await h.list()).toEqual([line('HDS/a.html', 'one'), line('HDS/b.html', 'bee'), line('top.html', 'top')]);
    fs.rmSync(h.at('HDS', 'a.html'));
    fs.rmSync(h.at('top.html'));
    fs.writeFileSync(h.at('HDS', 'c.html'), 'sea');
    fs.writeFileSync(h.at('a.html'), 'new');
    expect(await h.list()).toEqual([line('HDS/b.html', 'bee'), line('HDS/c.html', 'sea'), line('a.html', 'new')]);
    expect(await h.list('moduleName=wwwroot&prefix=a.html')).toEqual([line('a.html', 'new')]);
    expect(await h.list('moduleName=wwwroot&prefix=HDS/c.html')).toEqual([line('HDS/c.html', 'sea')]);
  });

  it("names a file as each listing's folder does when two modules' folders hold it", async () => {
    // Another module whose contract folder is a folder of wwwroot's: the same file, two paths.
    const h = await start(
      { 'HDS/sub/a.html': 'one' },
      {
        'modules/command/module.json': {
          ModuleID: 'command',
          ModuleConfig: { ContractBasePath: '../contracts/wwwroot/HDS' },
        },
      },
    );
    for (let round = 0; round < 2; round++) {
      expect(await h.list()).toEqual([line('HDS/sub/a.html', 'one')]);
      expect(await h.list('moduleName=command')).toEqual([line('sub/a.html', 'one')]);
      expect(await h.list('moduleName=command&prefix=sub/a.html')).toEqual([line('sub/a.html', 'one')]);
    }
  });

  it('lists a folder of thousands of files whole and in order, twice the same, leaving no listener behind', async () => {
    // Several slices of the walk (256 files each) in one folder, with names long enough for more
    // than ten chunks of the listing (each one waits for the socket to drain).
    const files: Record<string, string> = {};
    const long = 'n'.repeat(240);
    for (let i = 0; i < 2200; i++) files[`BIG/${long}${(i * 7919) % 2200}.txt`] = `${i}`;
    const h = await start(files);
    const warnings: string[] = [];
    const warned = (warning: Error) => warnings.push(warning.name);
    process.on('warning', warned);
    try {
      const first = await h.list();
      const names = Object.keys(files).sort();
      expect(first).toEqual(names.map((p) => line(p, files[p]!)));
      expect(first.join('\n').length).toBeGreaterThan(11 * 64 * 1024);
      expect(await h.list()).toEqual(first);
      await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on the next tick
    } finally {
      process.off('warning', warned);
    }
    expect(warnings).not.toContain('MaxListenersExceededWarning');
  });
});

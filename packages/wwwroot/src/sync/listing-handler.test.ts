import { afterEach, describe, expect, it } from 'vitest';
import { testAppSettings, useTestHosts } from '@ack/host/test-support';
import { wwwrootModule } from '../index.js';
import { basicAuth } from '../test-support/test-fixture.js';

// The listing's HTTP adapter (docs/sync.md "The listing"): which module and prefix a query names,
// what the closing line says about them, and the 400 problems for a bad module or a prefix that
// leaves the folder, beside their nearest neighbours that list. In process, over a real socket,
// and quick enough for mutation testing (docs/reliability.md "Mutation testing").

const TOKEN = 'listing-handler-token';
const AUTH = { Authorization: basicAuth(TOKEN) };
const hosts = useTestHosts();
let stop: (() => Promise<void>) | undefined;
afterEach(async () => {
  await stop?.();
  stop = undefined;
});

async function start(files: Record<string, string>) {
  const home = hosts.home(testAppSettings({ AppSettings: { LoadModules: ['wwwroot'] } }), {
    'modules/wwwroot/module.json': { ModuleID: 'wwwroot', ModuleConfig: { FileSyncTokens: [TOKEN] } },
    ...Object.fromEntries(Object.entries(files).map(([k, v]) => [`contracts/wwwroot/${k}`, v])),
  });
  const { url } = await hosts.start(home, { wwwroot: wwwrootModule });
  return async (query: string) => {
    const res = await fetch(`${url}/wwwroot/api/sync/list?${query}`, { headers: AUTH });
    const text = await res.text();
    if (res.status !== 200) return { res, text, done: undefined, paths: [] as string[] };
    const lines = text
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const done = lines.pop()!;
    return { res, text, done, paths: lines.map((l) => l.path as string) };
  };
}

describe('the listing over HTTP', () => {
  it('lists the whole folder without a prefix, or with only / or ., and says so in the closing line', async () => {
    const list = await start({ 'a.txt': 'a', 'sub/b.txt': 'bb', 'sub/deeper/c.txt': 'ccc' });
    for (const query of [
      'moduleName=wwwroot',
      'moduleName=wwwroot&prefix=',
      'moduleName=wwwroot&prefix=/',
      'moduleName=wwwroot&prefix=.',
    ]) {
      const whole = await list(query);
      expect(whole.res.status, query).toBe(200);
      expect(whole.res.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
      expect(whole.res.headers.get('cache-control')).toBe('no-store');
      expect(whole.paths, query).toEqual(['a.txt', 'sub/b.txt', 'sub/deeper/c.txt']);
      expect(whole.done, query).toMatchObject({ done: true, files: 3, bytes: 6, module: 'wwwroot', prefix: '' });
      // The closing line offers the batch upload with the host's limits.
      expect(whole.done?.batch).toMatchObject({ path: '/wwwroot/api/sync/batch' });
      expect((whole.done?.batch as { maxFiles: number }).maxFiles).toBeGreaterThan(0);
    }
  });

  it('lists only under a prefix, named with / between folders, for a folder or a single file', async () => {
    const list = await start({ 'a.txt': 'a', 'sub/b.txt': 'bb', 'sub/deeper/c.txt': 'ccc', 'subway.txt': 's' });
    const sub = await list('moduleName=wwwroot&prefix=sub');
    expect(sub.paths).toEqual(['sub/b.txt', 'sub/deeper/c.txt']);
    expect(sub.done).toMatchObject({ files: 2, bytes: 5, prefix: 'sub' });
    const deeper = await list('moduleName=wwwroot&prefix=sub/deeper/');
    expect(deeper.paths).toEqual(['sub/deeper/c.txt']);
    expect(deeper.done).toMatchObject({ files: 1, bytes: 3, prefix: 'sub/deeper' });
    const missing = await list('moduleName=wwwroot&prefix=nothing-here');
    expect(missing.res.status).toBe(200);
    expect(missing.paths).toEqual([]);
    expect(missing.done).toMatchObject({ done: true, files: 0, bytes: 0, prefix: 'nothing-here' });
  });

  it('refuses a prefix that leaves the folder with a 400 problem, and lists its neighbour inside', async () => {
    const list = await start({ 'sub/b.txt': 'bb' });
    for (const prefix of ['..', '../wwwroot', 'sub/../../x']) {
      const out = await list(`moduleName=wwwroot&prefix=${encodeURIComponent(prefix)}`);
      expect(out.res.status, prefix).toBe(400);
      expect(out.res.headers.get('content-type'), prefix).toMatch(/^application\/problem\+json/);
      expect(out.text).not.toContain('b.txt');
    }
    const inside = await list(`moduleName=wwwroot&prefix=${encodeURIComponent('sub/./')}`);
    expect(inside.res.status).toBe(200);
    expect(inside.paths).toEqual(['sub/b.txt']);
  });

  it('refuses a missing or unknown module with a 400 problem, and lists a known one', async () => {
    const list = await start({ 'a.txt': 'a' });
    for (const query of ['', 'moduleName=', 'moduleName=nope', 'prefix=a.txt']) {
      const out = await list(query);
      expect(out.res.status, query).toBe(400);
      expect(out.res.headers.get('content-type'), query).toMatch(/^application\/problem\+json/);
      expect(out.text, query).toMatch(/moduleName/);
    }
    const known = await list('moduleName=wwwroot&prefix=a.txt');
    expect(known.paths).toEqual(['a.txt']);
    expect(known.done).toMatchObject({ module: 'wwwroot', prefix: 'a.txt', files: 1 });
  });
});

import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { testAppSettings, useTestHosts, type TestHost } from '@ack/host/test-support';
import { wwwrootModule } from '../index.js';

// The release endpoints over a real host (docs/wire-formats.md "Sync releases"): stage, push,
// switch, list, rollback and discard; refusals as problem+json.

const TOKEN = 'release-token';
const AUTH = `Basic ${Buffer.from(`${TOKEN}:`).toString('base64')}`;
const hosts = useTestHosts();

async function start(
  releases: Record<string, unknown> = { IsEnabledReleases: true },
): Promise<TestHost & { contracts: string }> {
  const home = hosts.home(testAppSettings({ AppSettings: { LoadModules: ['wwwroot'] } }), {
    'modules/wwwroot/module.json': {
      ModuleID: 'wwwroot',
      ModuleConfig: { FileSyncTokens: [TOKEN], ...releases },
    },
    'contracts/wwwroot/HDS/page.html': '<p>adopted</p>',
  });
  const running = await hosts.start(home, { wwwroot: wwwrootModule });
  return { ...running, contracts: path.join(home.home, 'contracts', 'wwwroot') };
}

const api = (host: TestHost, route: string, q: Record<string, string>, init: RequestInit = {}) =>
  fetch(`${host.url}/wwwroot/api/sync/releases${route}?${new URLSearchParams({ moduleName: 'wwwroot', ...q })}`, {
    ...init,
    headers: { Authorization: AUTH, ...(init.headers as Record<string, string>) },
  });

async function release(host: TestHost, files: Record<string, string>): Promise<string> {
  const staged = await api(host, '/stage', { path: 'HDS/' }, { method: 'POST' });
  expect(staged.status).toBe(201);
  const { id } = (await staged.json()) as { id: string };
  for (const [filePath, body] of Object.entries(files)) {
    const put = await api(host, `/stage/${id}/file`, { path: 'HDS/', filePath }, { method: 'PUT', body });
    expect(put.status).toBe(200);
  }
  const committed = await api(host, `/stage/${id}/commit`, { path: 'HDS/' }, { method: 'POST' });
  expect(committed.status).toBe(200);
  return id;
}

describe('sync releases over HTTP', () => {
  it('exist only when ModuleConfig:IsEnabledReleases is true ("true" counts; unset and anything else do not)', async () => {
    for (const [setting, status] of [
      [undefined, 404],
      [false, 404],
      ['yes', 404],
      ['true', 201],
    ] as const) {
      const host = await start(setting === undefined ? {} : { IsEnabledReleases: setting });
      const staged = await api(host, '/stage', { path: 'HDS/' }, { method: 'POST' });
      expect(staged.status, String(setting)).toBe(status);
      // Off, the folder stays a plain folder: nothing was adopted as a release.
      if (status === 404) expect(fs.lstatSync(path.join(host.contracts, 'HDS')).isSymbolicLink()).toBe(false);
    }
  });

  it('switches a staged release in one step, lists it without the token, and rolls back', async () => {
    const host = await start();
    const page = () => fetch(`${host.url}/view/page.html`).then((r) => r.text());
    expect(await page()).toBe('<p>adopted</p>');
    const staged = await api(host, '/stage', { path: 'HDS/' }, { method: 'POST' });
    expect(staged.headers.get('server-timing')).toMatch(/^stage;dur=[0-9.]+$/);
    const { id } = (await staged.json()) as { id: string };
    await api(host, `/stage/${id}/file`, { path: 'HDS/', filePath: 'page.html' }, { method: 'PUT', body: '<p>r1</p>' });
    // Staged, not yet live.
    expect(await page()).toBe('<p>adopted</p>');
    const commit = await api(host, `/stage/${id}/commit`, { path: 'HDS/' }, { method: 'POST' });
    expect(commit.status).toBe(200);
    // Where the switch's time went on the host, in milliseconds.
    const timing =
      /^digest;dur=[0-9.]+;desc="[0-9]+ read", switch;dur=[0-9.]+, prune;dur=[0-9.]+, announce;dur=[0-9.]+$/;
    expect(commit.headers.get('server-timing')).toMatch(timing);
    expect(await page()).toBe('<p>r1</p>');
    const r2 = await release(host, { 'page.html': '<p>r2</p>' });
    expect(await page()).toBe('<p>r2</p>');

    const listed = (await (await api(host, '', { path: 'HDS/' })).json()) as {
      releases: { id: string; live: boolean; by: string; digest: string }[];
    };
    expect(listed.releases.map((r) => r.live)).toEqual([true, false, false]);
    expect(listed.releases[0]?.id).toBe(r2);
    expect(JSON.stringify(listed)).not.toContain(TOKEN);
    expect(listed.releases[0]?.by).toMatch(/^sha256:[0-9a-f]{8}$/);

    const back = await api(host, '/rollback', { path: 'HDS/', to: id }, { method: 'POST' });
    expect(back.headers.get('server-timing')).toMatch(/^switch;dur=[0-9.]+, prune;dur=[0-9.]+, announce;dur=[0-9.]+$/);
    expect(back.status).toBe(200);
    expect(await page()).toBe('<p>r1</p>');
    expect(fs.lstatSync(path.join(host.contracts, 'HDS')).isSymbolicLink()).toBe(true);
  });

  it('keeps a stage that a file, a batch or a listing goes into from counting as abandoned; an idle one goes', async () => {
    const host = await start();
    await release(host, { 'a.html': 'a' });
    const stage = async () =>
      ((await (await api(host, '/stage', { path: 'HDS/' }, { method: 'POST' })).json()) as { id: string }).id;
    const home = path.join(host.contracts, '.ack-releases', 'HDS');
    const hoursAgo = new Date(Date.now() - 2 * 3_600_000);
    const age = (id: string) => fs.utimesSync(path.join(home, `.${id}.by`), hoursAgo, hoursAgo);
    const [byPut, byBatch, byListing, idle] = [await stage(), await stage(), await stage(), await stage()];
    for (const id of [byPut, byBatch, byListing, idle]) age(id);
    await api(host, `/stage/${byPut}/file`, { path: 'HDS/', filePath: 'b.html' }, { method: 'PUT', body: 'b' });
    const form = new FormData();
    form.append('moduleName', 'wwwroot');
    form.append('filePath', 'c.html');
    form.append('file', new Blob(['c']), 'c.html');
    const batch = await fetch(`${host.url}/wwwroot/api/sync/batch?release=${byBatch}&path=HDS/`, {
      method: 'POST',
      headers: { Authorization: AUTH },
      body: form,
    });
    expect(batch.status).toBe(200);
    const listing = await fetch(`${host.url}/wwwroot/api/sync/list?moduleName=wwwroot&release=${byListing}&path=HDS/`, {
      headers: { Authorization: AUTH },
    });
    expect(listing.status).toBe(200);
    await listing.text();
    // The next stage of the prefix removes only the idle one.
    await stage();
    const staged = (id: string) => fs.existsSync(path.join(home, `${id}.staging`));
    expect([byPut, byBatch, byListing, idle].map(staged)).toEqual([true, true, true, false]);
  });

  it("refuses a stage id that is not one (a way out of the prefix's folder) before touching any file", async () => {
    const host = await start();
    await release(host, { 'a.html': 'a' });
    // A folder named like a stage, two levels up from the prefix's releases, holding a file.
    const decoy = path.join(host.contracts, 'x.staging');
    fs.mkdirSync(decoy);
    fs.writeFileSync(path.join(decoy, 'keep.html'), 'keep');
    for (const method of ['DELETE', 'PUT']) {
      const out = await api(
        host,
        `/stage/..%2F..%2Fx/file`,
        { path: 'HDS/', filePath: 'keep.html' },
        { method, ...(method === 'PUT' ? { body: 'overwritten' } : {}) },
      );
      expect(out.status, method).toBe(400);
      expect(await out.json()).toMatchObject({ code: 'release.bad_id' });
    }
    expect(fs.readFileSync(path.join(decoy, 'keep.html'), 'utf8')).toBe('keep');
    // Its neighbour, a well-formed id with no stage, is unknown.
    const unknown = await api(host, '/stage/x/file', { path: 'HDS/', filePath: 'keep.html' }, { method: 'DELETE' });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ code: 'release.not_staged' });
  });

  it('refuses a nested prefix, an unknown release and a path out of the stage as problems', async () => {
    const host = await start();
    await release(host, { 'a.html': 'a' });
    const nested = await api(host, '/stage', { path: 'HDS/TST/' }, { method: 'POST' });
    expect(nested.status).toBe(409);
    expect(nested.headers.get('content-type')).toContain('application/problem+json');
    expect(await nested.json()).toMatchObject({ code: 'release.nested_prefix' });
    // The neighbour that only shares letters is a prefix of its own.
    expect((await api(host, '/stage', { path: 'HDSX/' }, { method: 'POST' })).status).toBe(201);

    const unknown = await api(host, '/stage/r-none/commit', { path: 'HDS/' }, { method: 'POST' });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ code: 'release.not_staged' });
    const { id } = (await (await api(host, '/stage', { path: 'HDS/' }, { method: 'POST' })).json()) as { id: string };
    const out = await api(
      host,
      `/stage/${id}/file`,
      { path: 'HDS/', filePath: '../../x.html' },
      { method: 'PUT', body: 'x' },
    );
    expect(out.status).toBe(400);
    // A PUT is refused before its body for a bad prefix or an unknown staging, as a problem.
    const badPrefix = await api(
      host,
      `/stage/${id}/file`,
      { path: '.x/', filePath: 'a' },
      { method: 'PUT', body: 'x' },
    );
    expect(badPrefix.status).toBe(400);
    expect(await badPrefix.json()).toMatchObject({ code: 'release.bad_prefix' });
    const notStaged = await api(
      host,
      '/stage/r-none/file',
      { path: 'HDS/', filePath: 'a' },
      { method: 'PUT', body: 'x' },
    );
    expect(notStaged.status).toBe(404);
    expect((await api(host, `/stage/${id}`, { path: 'HDS/' }, { method: 'DELETE' })).status).toBe(200);
    const noToken = await fetch(`${host.url}/wwwroot/api/sync/releases?moduleName=wwwroot&path=HDS/`);
    expect(noToken.status).toBe(401);
    expect((await api(host, '', { path: '../' })).status).toBe(400);
  });

  it('names every prefix with releases and its live release, behind the token', async () => {
    const host = await start();
    const none = await api(host, '/live', {});
    expect(none.status).toBe(200);
    expect(await none.json()).toEqual({ module: 'wwwroot', prefixes: [] });
    const first = await release(host, { 'page.html': '<p>1</p>' });
    const second = await release(host, { 'page.html': '<p>2</p>' });
    expect(first).not.toBe(second);
    const live = await api(host, '/live', {});
    expect(await live.json()).toEqual({ module: 'wwwroot', prefixes: [{ prefix: 'HDS/', live: second }] });
    expect((await api(host, '/rollback', { path: 'HDS/' }, { method: 'POST' })).status).toBe(200);
    expect(await (await api(host, '/live', {})).json()).toEqual({
      module: 'wwwroot',
      prefixes: [{ prefix: 'HDS/', live: first }],
    });
    // The token's neighbours: none, and a wrong one.
    expect((await fetch(`${host.url}/wwwroot/api/sync/releases/live?moduleName=wwwroot`)).status).toBe(401);
    const wrong = `Basic ${Buffer.from(`${TOKEN}x:`).toString('base64')}`;
    const refused = await fetch(`${host.url}/wwwroot/api/sync/releases/live?moduleName=wwwroot`, {
      headers: { Authorization: wrong },
    });
    expect(refused.status).toBe(401);
    expect((await api(host, '/live', { moduleName: 'nope' })).status).toBe(400);
  });
});

describe('a start after a crash', () => {
  it('has removed the stage a host died with, and put back a missing link, before it serves', async () => {
    // The disk as a host killed mid-push leaves it: a release without its link, a stage and its notes.
    const id = 'r-20261128T213823123Z-1a2b';
    const home = hosts.home(testAppSettings({ AppSettings: { LoadModules: ['wwwroot'] } }), {
      'modules/wwwroot/module.json': {
        ModuleID: 'wwwroot',
        ModuleConfig: { FileSyncTokens: [TOKEN], IsEnabledReleases: true },
      },
      [`contracts/wwwroot/.ack-releases/HDS/${id}/page.html`]: '<p>one</p>',
      [`contracts/wwwroot/.ack-releases/HDS/${id}.json`]: {
        id,
        prefix: 'HDS/',
        time: '2026-11-28T21:38:23.123Z',
        by: 'test',
        files: 1,
        bytes: 10,
        digest: 'sha256:0',
        edits: [],
      },
      'contracts/wwwroot/.ack-releases/HDS/r-20261128T213900000Z-9f00.staging/page.html': '<p>half</p>',
      'contracts/wwwroot/.ack-releases/HDS/.r-20261128T213900000Z-9f00.by': 'test',
      'contracts/wwwroot/.ack-releases/HDS/.r-20261128T213900000Z-9f00.base': id,
    });
    const host = await hosts.start(home, { wwwroot: wwwrootModule });
    const releases = path.join(home.home, 'contracts', 'wwwroot', '.ack-releases', 'HDS');
    // Checked at once, before any request: the start waited for the recovery.
    expect(fs.readdirSync(releases).sort()).toEqual([id, `${id}.json`]);
    expect(fs.readlinkSync(path.join(home.home, 'contracts', 'wwwroot', 'HDS'))).toBe(`.ack-releases/HDS/${id}`);
    const r = await fetch(`${host.url}/view/page.html`);
    expect([r.status, r.headers.get('ack-release'), await r.text()]).toEqual([200, id, '<p>one</p>']);
  });
});

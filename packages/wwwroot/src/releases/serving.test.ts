import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { testAppSettings, useTestHosts, type TestHost } from '@ack/host/test-support';
import { wwwrootModule } from '../index.js';

// Serving a release prefix over a real host (docs/releases.md "A pass of a reader", "Grace for
// removed files"): `ack-release` on every answer, pinning by the request's `ack-release`, and a
// removed file served from the previous release while the grace lasts.

const TOKEN = 'release-token';
const AUTH = `Basic ${Buffer.from(`${TOKEN}:`).toString('base64')}`;
const hosts = useTestHosts();

async function start(releases: Record<string, unknown> = {}): Promise<TestHost & { contracts: string }> {
  const home = hosts.home(testAppSettings({ AppSettings: { LoadModules: ['wwwroot'] } }), {
    'modules/wwwroot/module.json': {
      ModuleID: 'wwwroot',
      ModuleConfig: { FileSyncTokens: [TOKEN], IsEnabledReleases: true, Releases: releases },
    },
    'contracts/wwwroot/HDS/page.html': '<p>adopted</p>',
    'modules/wwwroot/wwwroot/plain.txt': 'plain',
  });
  const running = await hosts.start(home, { wwwroot: wwwrootModule });
  return { ...running, contracts: path.join(home.home, 'contracts', 'wwwroot') };
}

const api = (host: TestHost, route: string, q: Record<string, string>, init: RequestInit = {}) =>
  fetch(`${host.url}/wwwroot/api/sync/releases${route}?${new URLSearchParams({ moduleName: 'wwwroot', ...q })}`, {
    ...init,
    headers: { Authorization: AUTH },
  });

/** A release with these files changed and those removed. */
async function release(host: TestHost, files: Record<string, string>, removed: string[] = []): Promise<string> {
  const staged = await api(host, '/stage', { path: 'HDS/' }, { method: 'POST' });
  expect(staged.status).toBe(201);
  const { id } = (await staged.json()) as { id: string };
  for (const [filePath, body] of Object.entries(files)) {
    expect((await api(host, `/stage/${id}/file`, { path: 'HDS/', filePath }, { method: 'PUT', body })).status).toBe(
      200,
    );
  }
  for (const filePath of removed) {
    expect((await api(host, `/stage/${id}/file`, { path: 'HDS/', filePath }, { method: 'DELETE' })).status).toBe(200);
  }
  expect((await api(host, `/stage/${id}/commit`, { path: 'HDS/' }, { method: 'POST' })).status).toBe(200);
  return id;
}

const get = async (host: TestHost, file: string, pin?: string) => {
  const r = await fetch(`${host.url}/view/${file}`, { headers: pin === undefined ? {} : { 'ack-release': pin } });
  return { status: r.status, release: r.headers.get('ack-release'), body: await r.text() };
};

describe('serving a release prefix', () => {
  it('serves a file the live release removed from the previous one within the grace; never a file no release had', async () => {
    const host = await start();
    const r1 = await release(host, { 'a.js': 'one a', 'page.html': 'one' });
    const r2 = await release(host, { 'page.html': 'two' }, ['a.js']);
    expect(await get(host, 'page.html')).toEqual({ status: 200, release: r2, body: 'two' });
    const a = await get(host, 'a.js');
    expect([a.status, a.body]).toEqual([200, 'one a']);
    expect(a.release).toBe(r2);
    expect((await get(host, 'never.js')).status).toBe(404);
    // Pinned to the release before, it is that release's file as well.
    expect(await get(host, 'a.js', r1)).toEqual({ status: 200, release: r1, body: 'one a' });
  });

  it('answers 404 for a removed file once the grace is over (Releases:GraceSeconds 1)', async () => {
    const host = await start({ GraceSeconds: 1 });
    await release(host, { 'a.js': 'one a' });
    await release(host, { 'page.html': 'two' }, ['a.js']);
    let status = 0;
    for (let i = 0; i < 100 && status !== 404; i++) {
      status = (await get(host, 'a.js')).status;
      if (status !== 404) await new Promise((r) => setTimeout(r, 50));
    }
    expect(status).toBe(404);
    expect((await get(host, 'page.html')).body).toBe('two');
  });

  it('serves a pinned release still on disk; a bad, partial, unknown or pruned id gets the live one, never a 500', async () => {
    const host = await start({ Keep: 2, GraceSeconds: 0 });
    const r1 = await release(host, { 'page.html': 'one' });
    const r2 = await release(host, { 'page.html': 'two' });
    const r3 = await release(host, { 'page.html': 'three' });
    // Keep 2 and no grace: r1 is pruned from disk.
    expect(fs.existsSync(path.join(host.contracts, '.ack-releases', 'HDS', r1))).toBe(false);
    expect(await get(host, 'page.html', r2)).toEqual({ status: 200, release: r2, body: 'two' });
    expect(await get(host, 'page.html', r3)).toEqual({ status: 200, release: r3, body: 'three' });
    // Caches never answer one release's request with another's bytes, in either order.
    expect((await get(host, 'page.html')).body).toBe('three');
    expect((await get(host, 'page.html', r2)).body).toBe('two');
    for (const pin of [
      r1,
      r2.slice(0, -1),
      `${r2}x`,
      'nope',
      '../HDS',
      `${r2}.staging`,
      '',
      ' '.repeat(3),
      'x'.repeat(65),
    ]) {
      expect(await get(host, 'page.html', pin), pin).toEqual({ status: 200, release: r3, body: 'three' });
    }
    // A rollback is seen at once, named in the answer.
    expect((await api(host, '/rollback', { path: 'HDS/' }, { method: 'POST' })).status).toBe(200);
    expect(await get(host, 'page.html')).toEqual({ status: 200, release: r2, body: 'two' });
  });

  it('serves the adopted release between the two renames of an adoption, when the link is not there yet', async () => {
    const host = await start();
    const r1 = await release(host, { 'page.html': 'one' });
    const adopted = (await api(host, '/', { path: 'HDS/' }).then((r) => r.json())) as {
      releases: Array<{ id: string }>;
    };
    const first = adopted.releases.at(-1)!.id;
    // The disk as an adoption leaves it between its renames: one release with its manifest, no link.
    const home = path.join(host.contracts, '.ack-releases', 'HDS');
    fs.rmSync(path.join(home, r1), { recursive: true });
    fs.rmSync(path.join(home, `${r1}.json`));
    fs.rmSync(path.join(host.contracts, 'HDS'));
    expect(await get(host, 'page.html')).toEqual({ status: 200, release: first, body: '<p>adopted</p>' });
  });

  it('leaves answers outside a release prefix without ack-release', async () => {
    const host = await start();
    await release(host, { 'page.html': 'one' });
    const r = await fetch(`${host.url}/plain.txt`);
    expect([r.status, await r.text(), r.headers.get('ack-release')]).toEqual([200, 'plain', null]);
    expect((await fetch(`${host.url}/view/page.html`)).headers.get('ack-release')).not.toBeNull();
  });
});

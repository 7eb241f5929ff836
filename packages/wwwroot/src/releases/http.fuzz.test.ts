import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fuzzOptions, testAppSettings, useTestHosts } from '@ack/host/test-support';
import { wwwrootModule } from '../index.js';

// Seeded fuzz of the release endpoints and the stage's query on the listing and the batch, over a
// real host (docs/wire-formats.md "Sync releases"): whatever the route, id, prefix, file path or
// body, the answer is a 2xx or a 4xx problem, never a 5xx, and nothing is written outside the
// contract folder.

const TOKEN = 'release-fuzz-token';
const AUTH = { Authorization: `Basic ${Buffer.from(`${TOKEN}:`).toString('base64')}` };
const hosts = useTestHosts();

const segment = fc.oneof(
  fc.constantFrom('HDS', 'hds', 'A', '.', '..', '', '.ack-releases', '%2e%2e', '%00', '\\', 'x y', 'ü', '..\\..'),
  fc.stringMatching(/^[A-Za-z0-9_.-]{1,8}$/),
);
const prefix = fc.oneof(
  fc.array(segment, { maxLength: 4 }).map((s) => `${s.join('/')}/`),
  fc.string({ maxLength: 16 }),
);
const id = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_-]{0,10}$/),
  fc.constantFrom('', '..', 'r-1/../x', 'a'.repeat(65), '%00', 'ü'),
  fc.string({ maxLength: 12 }),
);

const request = fc.record({
  route: fc.constantFrom(
    'stage',
    'put',
    'delete-file',
    'commit',
    'discard',
    'list',
    'live',
    'rollback',
    'listing',
    'batch',
  ),
  id,
  prefix,
  filePath: fc.oneof(
    fc.array(segment, { maxLength: 4 }).map((s) => s.join('/')),
    fc.string({ maxLength: 16 }),
  ),
  body: fc.string({ maxLength: 40 }),
  module: fc.constantFrom('wwwroot', 'WWWROOT', 'nope', ''),
});

describe('release endpoints fuzz', () => {
  it('answer any route, id, prefix and file path with a 2xx or a 4xx problem, writing nothing outside the contracts', async () => {
    const home = hosts.home(testAppSettings({ AppSettings: { LoadModules: ['wwwroot'] } }), {
      'modules/wwwroot/module.json': {
        ModuleID: 'wwwroot',
        ModuleConfig: { FileSyncTokens: [TOKEN], IsEnabledReleases: true },
      },
      'contracts/wwwroot/HDS/page.html': '<p>adopted</p>',
      'outside/key.txt': 'secret',
    });
    const h = await hosts.start(home, { wwwroot: wwwrootModule });
    const outside = path.join(home.home, 'outside');
    const base = `${h.url}/wwwroot/api/sync`;
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const q = (extra: Record<string, string>) =>
          new URLSearchParams({ moduleName: r.module, path: r.prefix, ...extra }).toString();
        const e = encodeURIComponent(r.id);
        const [method, url, body]: [string, string, string | FormData | undefined] =
          r.route === 'stage'
            ? ['POST', `${base}/releases/stage?${q({ id: r.id })}`, undefined]
            : r.route === 'put'
              ? ['PUT', `${base}/releases/stage/${e}/file?${q({ filePath: r.filePath })}`, r.body]
              : r.route === 'delete-file'
                ? ['DELETE', `${base}/releases/stage/${e}/file?${q({ filePath: r.filePath })}`, undefined]
                : r.route === 'commit'
                  ? ['POST', `${base}/releases/stage/${e}/commit?${q({})}`, undefined]
                  : r.route === 'discard'
                    ? ['DELETE', `${base}/releases/stage/${e}?${q({})}`, undefined]
                    : r.route === 'list'
                      ? ['GET', `${base}/releases?${q({})}`, undefined]
                      : r.route === 'live'
                        ? ['GET', `${base}/releases/live?${q({})}`, undefined]
                        : r.route === 'rollback'
                          ? ['POST', `${base}/releases/rollback?${q({ to: r.id })}`, undefined]
                          : r.route === 'listing'
                            ? ['GET', `${base}/list?${q({ release: r.id })}`, undefined]
                            : ['POST', `${base}/batch?${q({ release: r.id })}`, batchForm(r.filePath, r.body)];
        const res = await fetch(url, { method, headers: AUTH, body });
        await res.arrayBuffer();
        expect(res.status, `${method} ${url}`).toBeLessThan(500);
        if (res.status >= 400) expect(res.headers.get('content-type')).toContain('application/problem+json');
      }),
      fuzzOptions(300),
    );
    // Nothing went outside the contract folder, and the prefix still serves one whole release.
    expect(fs.readdirSync(outside)).toEqual(['key.txt']);
    expect(fs.readFileSync(path.join(outside, 'key.txt'), 'utf8')).toBe('secret');
    expect((await fetch(`${base}/releases/live?moduleName=wwwroot`, { headers: AUTH })).status).toBe(200);
  });
});

function batchForm(filePath: string, body: string): FormData {
  const form = new FormData();
  form.append('moduleName', 'wwwroot');
  form.append('filePath', filePath);
  form.append('file', new Blob([body]), 'f');
  return form;
}

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  createTestHome,
  makeTestCertificate,
  nodeHttp2Client,
  startTestHost,
  testAppSettings,
  type TestHost,
} from '@ack/host/test-support';
import { wwwrootModule } from '../index.js';

// The symlinked release switch over HTTP/2, on one connection kept open across the switch
// (docs/static-files.md "Symlinked release folders").
let base: string;
let running: TestHost;
let tlsUrl: string;

beforeAll(async () => {
  base = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-symlinked-h2-'));
  const stamp = new Date('2026-01-02T03:04:05Z');
  for (const n of [1, 2]) {
    const dir = path.join(base, 'releases', `r${n}`);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'page.html'), `release ${n}`);
    fs.writeFileSync(path.join(dir, `only-${n}.html`), 'x');
    for (const f of ['page.html', `only-${n}.html`, '.']) fs.utimesSync(path.join(dir, f), stamp, stamp);
  }
  fs.symlinkSync(path.join(base, 'releases', 'r1'), path.join(base, 'current'));
  const cert = makeTestCertificate(path.join(base, 'cert'));
  const home = createTestHome(
    testAppSettings({
      AppSettings: { LoadModules: ['wwwroot'], ServerDevCertFilePath: cert.cert, ServerDevCertKeyFilePath: cert.key },
    }),
    {
      'modules/wwwroot/module.json': {
        ModuleID: 'wwwroot',
        ModuleConfig: { WWWRootBasePath: path.join(base, 'current') },
      },
    },
  );
  running = await startTestHost(home, { wwwroot: wwwrootModule }, {}, { tlsPort: 0 });
  tlsUrl = running.host.tlsUrl!;
});
afterAll(async () => {
  await running?.close();
  fs.rmSync(base, { recursive: true, force: true });
});

it('an HTTP/2 connection open across the switch gets the new release on its next stream', async () => {
  const h2 = nodeHttp2Client(tlsUrl);
  try {
    const page = await h2.send({ path: '/page.html' });
    expect(page.text).toBe('release 1');
    expect((await h2.send({ path: '/only-2.html' })).status).toBe(404);
    const etag = String(page.headers.etag);
    fs.symlinkSync(path.join(base, 'releases', 'r2'), path.join(base, 'current.tmp'));
    fs.renameSync(path.join(base, 'current.tmp'), path.join(base, 'current'));
    const after = await h2.send({ path: '/page.html', headers: { 'if-none-match': etag } });
    expect(after.status).toBe(200);
    expect(after.text).toBe('release 2');
    expect((await h2.send({ path: '/only-2.html' })).status).toBe(200);
    expect((await h2.send({ path: '/only-1.html' })).status).toBe(404);
  } finally {
    await h2.close();
  }
});

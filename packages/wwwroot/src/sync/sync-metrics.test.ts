import { describe, expect, it } from 'vitest';
import { testAppSettings, useTestHosts } from '@ack/host/test-support';
import { wwwrootModule } from '../index.js';
import { cookieHeader, DEV_SIGN_IN, DEV_SIGN_OUT, postJson, startSignInHost } from '../test-support/sign-in-fixture.js';

// Sync requests on the host's /metrics, by kind and outcome, with their body bytes
// (docs/operations.md "The host's own").
const TOKEN = 'metrics-sync-token';
const KEY = 'metrics-sync-key';
const basic = (token: string) => `Basic ${Buffer.from(`${token}:`).toString('base64')}`;
const hosts = useTestHosts();

describe('sync on /metrics', () => {
  it('counts an upload that lands as ok with its bytes, and one with a wrong token as refused', async () => {
    const home = hosts.home(testAppSettings({ AppSettings: { LoadModules: ['wwwroot'], HostAccessID: KEY } }), {
      'modules/wwwroot/module.json': { ModuleID: 'wwwroot', ModuleConfig: { FileSyncTokens: [TOKEN] } },
      'contracts/wwwroot/HDS/page.html': '<p>v1</p>',
    });
    const { url } = await hosts.start(home, { wwwroot: wwwrootModule });
    const upload = (token: string) =>
      fetch(
        `${url}/wwwroot/api/sync/upload?${new URLSearchParams({ moduleName: 'wwwroot', changeType: 'Changed', filePath: 'HDS/page.html' })}`,
        { method: 'PUT', body: '<p>v2</p>', headers: { Authorization: basic(token) } },
      );
    expect((await upload(TOKEN)).status).toBe(200);
    expect((await upload(`${TOKEN}x`)).status).toBe(401);
    const text = await (await fetch(`${url}/metrics`, { headers: { hostAccessID: KEY } })).text();
    expect(text).toMatch(/^ack_sync_requests_total\{kind="upload",outcome="ok"\} 1$/m);
    expect(text).toMatch(/^ack_sync_requests_total\{kind="upload",outcome="refused"\} 1$/m);
    expect(text).toMatch(/^ack_sync_bytes_total\{kind="upload"\} 18$/m);
    expect(text).toMatch(/^ack_sync_requests_total\{kind="listing",outcome="ok"\} 0$/m);
    expect(text).toMatch(
      /^http_server_request_duration_seconds_count\{http_request_method="PUT",http_response_status_code="200",http_route="sync"\} 1$/m,
    );
    expect(text).toMatch(/^handstack_api_requests_total\{path="\/wwwroot\/api\/sync",status="401"\} 1$/m);
  });
});

describe('sign-ins on /metrics', () => {
  it('counts a dev sign-in and a sign-out', async () => {
    const t = await startSignInHost({ appSettings: { HostAccessID: KEY } });
    try {
      const first = await postJson(`${t.url}${DEV_SIGN_IN}`, { UserID: 'counted' });
      expect(first.status).toBeLessThan(400);
      const out = await fetch(`${t.url}${DEV_SIGN_OUT}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie: cookieHeader(first) },
      });
      expect(out.status).toBeLessThan(400);
      const text = await (await fetch(`${t.url}/metrics`, { headers: { hostAccessID: KEY } })).text();
      expect(text).toMatch(/^ack_sign_ins_total\{event="sign_in",outcome="ok"\} 1$/m);
      expect(text).toMatch(/^ack_sign_ins_total\{event="sign_out",outcome="ok"\} 1$/m);
    } finally {
      await t.close();
    }
  });
});

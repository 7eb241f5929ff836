import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { testAppSettings, useTestHosts } from '../test-support/index.js';

// The status page (docs/operations.md "Status page"): the page and its assets hold no figure and
// are answered to anyone, never cached; its figures (status.json) need the operations credential,
// in a header only.
const KEY = 'status-host-key';
const hosts = useTestHosts();

async function start(app: Record<string, unknown> = {}) {
  const home = hosts.home(
    testAppSettings({ AppSettings: { HostAccessID: KEY, Security: { MaxFailedAccessChecks: 1000 }, ...app } }),
  );
  return (await hosts.start(home)).url;
}

/** A GET with headers exactly as written (names keep their case on the wire). */
function get(url: string, rawHeaders: [string, string][] = []) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
    const req = http.request(url, { method: 'GET', headers: Object.fromEntries(rawHeaders) }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('error', reject).end();
  });
}

const NO_STORE = 'no-store, no-cache, max-age=0';

describe('the status page', () => {
  it('answers the page and its assets, no-store, with external script and style only', async () => {
    const url = await start();
    const page = await get(`${url}/status`);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['cache-control']).toBe(NO_STORE);
    expect(page.body).toContain('<script src="/status/status.js" defer></script>');
    // No inline script or style: a Content-Security-Policy without 'unsafe-inline' lets the page run.
    expect(page.body).not.toMatch(/<script>|<style|onclick|style="/);
    const script = await get(`${url}/status/status.js`);
    expect(script.status).toBe(200);
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(script.headers['cache-control']).toBe(NO_STORE);
    expect((await get(`${url}/status/status.css`)).headers['content-type']).toBe('text/css; charset=utf-8');
    expect((await get(`${url}/status/other.js`)).status).toBe(404);
  });

  it('answers status.json with the hostAccessID header or Bearer: figures per worker and readiness', async () => {
    const url = await start();
    for (let i = 0; i < 3; i++) await get(`${url}/checkip`);
    const first = await get(`${url}/status/status.json`, [['hostAccessID', KEY]]);
    expect(first.status).toBe(200);
    expect(first.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(first.headers['cache-control']).toBe(NO_STORE);
    expect(first.headers.pragma).toBe('no-cache');
    const view = JSON.parse(first.body);
    expect(view.workers).toHaveLength(1);
    expect(view.workers[0]).toMatchObject({ worker: null, pid: process.pid, ready: true, failed: [] });
    expect(view.workers[0].openConnections).toBeGreaterThanOrEqual(1);
    expect(view.total.ready).toBe(true);
    expect(view.total.p50).toBeGreaterThan(0);
    const second = JSON.parse((await get(`${url}/status/status.json`, [['Authorization', `Bearer ${KEY}`]])).body);
    expect(second.total.requestsPerSecond).toBeGreaterThan(0);
    expect(second.windowSeconds).toBeGreaterThan(0);
    expect(first.body + second.body).not.toContain(KEY);
  });

  it('refuses status.json without the key, with a prefix of it, a longer one, or the key in the query string', async () => {
    const url = await start();
    const json = `${url}/status/status.json`;
    const none = await get(json);
    expect(none.status).toBe(401);
    expect(none.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(none.headers['cache-control']).toBe(NO_STORE);
    expect(JSON.parse(none.body).code).toBe('operations.missing_host_access_id');
    for (const value of [KEY.slice(0, -1), `${KEY}x`, KEY.toUpperCase()]) {
      const res = await get(json, [['hostAccessID', value]]);
      expect(res.status, value).toBe(401);
      expect(JSON.parse(res.body).code).toBe('operations.invalid_host_access_id');
      expect(res.body).not.toContain(KEY);
    }
    // The header's name is read in any case (HTTP names are case-blind); its value is not.
    expect((await get(json, [['HOSTACCESSID', KEY]])).status).toBe(200);
    expect((await get(json, [['Authorization', `Basic ${KEY}`]])).status).toBe(401);
    expect((await get(`${json}?hostAccessID=${KEY}`)).status).toBe(401);
    expect((await get(`${json}?hostAccessID=${KEY}`, [['hostAccessID', KEY]])).status).toBe(200);
  });

  it('follows StatusPagePath; UseStatusPage false or UseMetrics false leaves the path to the 404', async () => {
    const moved = await start({ StatusPagePath: '/ops/look' });
    expect((await get(`${moved}/ops/look`)).status).toBe(200);
    expect((await get(`${moved}/ops/look/status.json`, [['hostAccessID', KEY]])).status).toBe(200);
    expect((await get(`${moved}/status`)).status).toBe(404);
    const off = await start({ UseStatusPage: false });
    expect((await get(`${off}/status`)).status).toBe(404);
    expect((await get(`${off}/status/status.json`, [['hostAccessID', KEY]])).status).toBe(404);
    const noMetrics = await start({ UseMetrics: false });
    expect((await get(`${noMetrics}/status`)).status).toBe(404);
  });
});

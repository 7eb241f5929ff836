import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { testAppSettings, useTestHosts } from '../test-support/index.js';

// The original's operations endpoints (docs/operations.md "Operations endpoints",
// docs/compatibility.md): /checkip without a credential; /diagnostics and /metrics behind the
// hostAccessID header or a Bearer credential, never cached.
const KEY = 'ops-host-key';
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

describe('the operations endpoints', () => {
  it('/checkip answers the client address as text/html, without a credential', async () => {
    const url = await start();
    for (const p of ['/checkip', '/CheckIP']) {
      const res = await get(url + p);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.body).toBe('127.0.0.1');
    }
  });

  it('/metrics answers Prometheus text with the hostAccessID header, in any case of its name and of the path', async () => {
    const url = await start();
    for (const [p, name] of [
      ['/metrics', 'hostAccessID'],
      ['/METRICS', 'HOSTACCESSID'],
      ['/Metrics', 'hostaccessid'],
    ] as const) {
      const res = await get(url + p, [[name, KEY]]);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
      expect(res.headers['cache-control']).toBe(NO_STORE);
      expect(res.headers.pragma).toBe('no-cache');
      expect(res.body).toMatch(/^# HELP http_server_request_duration_seconds /m);
      expect(res.body).toMatch(/^handstack_requests_total \d+$/m);
      expect(res.body).toMatch(/^process_cpu_user_seconds_total /m);
    }
  });

  it('takes Authorization: Bearer with the key; a prefix of it, a wrong key or another scheme is 401', async () => {
    const url = await start();
    expect((await get(`${url}/metrics`, [['Authorization', `Bearer ${KEY}`]])).status).toBe(200);
    expect((await get(`${url}/metrics`, [['authorization', `bearer ${KEY}`]])).status).toBe(200);
    for (const value of [`Bearer ${KEY.slice(0, -1)}`, `Bearer ${KEY}x`, 'Bearer wrong', `Basic ${KEY}`, 'Bearer']) {
      const res = await get(`${url}/metrics`, [['Authorization', value]]);
      expect(res.status, value).toBe(401);
      expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      expect(res.headers['cache-control']).toBe(NO_STORE);
      expect(res.body).not.toContain(KEY);
    }
  });

  it('refuses /diagnostics and /metrics without the key, with a prefix of it, or with it in the query string', async () => {
    const url = await start();
    for (const p of ['/diagnostics', '/metrics']) {
      const none = await get(url + p);
      expect(none.status).toBe(401);
      expect(JSON.parse(none.body).code).toBe('operations.missing_host_access_id');
      const prefix = await get(url + p, [['hostAccessID', KEY.slice(0, 4)]]);
      expect(prefix.status).toBe(401);
      expect(JSON.parse(prefix.body).code).toBe('operations.invalid_host_access_id');
      expect((await get(`${url}${p}?hostAccessID=${KEY}`)).status).toBe(401);
      expect((await get(url + p, [['hostAccessID', KEY]])).status).toBe(200);
    }
  });

  it('/diagnostics is camelCase JSON figures, without the key or any path of the host', async () => {
    const url = await start();
    const res = await get(`${url}/diagnostics`, [['hostAccessID', KEY]]);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['cache-control']).toBe(NO_STORE);
    expect(res.headers.pragma).toBe('no-cache');
    const body = JSON.parse(res.body) as Record<string, Record<string, unknown>>;
    expect(Object.keys(body)).toEqual(['environment', 'process', 'runtime', 'hosting', 'server']);
    expect(body.process!.processId).toBe(process.pid);
    expect(body.runtime!.version).toBe(process.version);
    expect(res.body).not.toContain(KEY);
    expect(res.body).not.toContain(process.cwd());
  });

  it('a host without a key of its own refuses everyone; UseMetrics false leaves /metrics to the 404', async () => {
    const placeholder = await start({ HostAccessID: 'ACK_HOSTACCESSID' });
    const refused = await get(`${placeholder}/metrics`, [['hostAccessID', 'ACK_HOSTACCESSID']]);
    expect(refused.status).toBe(401);
    expect(JSON.parse(refused.body).code).toBe('operations.not_configured');
    const off = await start({ UseMetrics: false });
    expect((await get(`${off}/metrics`, [['hostAccessID', KEY]])).status).toBe(404);
    expect((await get(`${off}/diagnostics`, [['hostAccessID', KEY]])).status).toBe(200);
  });

  it('counts requests by the capability that answered, never by the raw path', async () => {
    const url = await start();
    await get(`${url}/no/such/page-${Date.now()}.html`);
    await get(`${url}/checkip`);
    const text = (await get(`${url}/metrics`, [['hostAccessID', KEY]])).body;
    expect(text).toMatch(
      /^http_server_request_duration_seconds_count\{http_request_method="GET",http_response_status_code="404",http_route="not-found"\} 1$/m,
    );
    expect(text).toMatch(
      /^http_server_request_duration_seconds_count\{http_request_method="GET",http_response_status_code="200",http_route="operations"\} 1$/m,
    );
    expect(text).not.toContain('no/such');
    // The 401 of a request without the key is counted by its problem code.
    await get(`${url}/metrics`);
    const after = (await get(`${url}/metrics`, [['hostAccessID', KEY]])).body;
    expect(after).toMatch(/^ack_problem_responses_total\{code="operations.missing_host_access_id"\} 1$/m);
  });
});

import express from 'express';
import { describe, expect, it } from 'vitest';
import type { AckModuleFactory } from '../modules/contract.js';
import { rawConnection, testAppSettings, useTestHosts } from '../test-support/index.js';

// The cross-site guard on a cookie-authorised route (docs/pipeline.md "Cross-site requests"),
// driven over HTTP: which browser signals pass and which get 403 `request.cross_site`.
const hosts = useTestHosts();

/** A module with one route behind the guard, for every method. */
const guarded: AckModuleFactory = (ctx) => {
  const router = express.Router();
  router.all('/write', ctx.host.refuseCrossSite, (req, res) => res.json({ done: req.method }));
  return { routes: [{ mount: '/guarded/api', handler: router }] };
};

async function start(withOrigins: string[]) {
  const home = hosts.home(testAppSettings({ AppSettings: { LoadModules: ['guarded'], WithOrigins: withOrigins } }), {
    'modules/guarded/module.json': { ModuleID: 'guarded' },
  });
  const { url } = await hosts.start(home, { guarded });
  return async (method: string, headers: Record<string, string>, host = 'app.test:8421') => {
    const c = await rawConnection(url);
    const lines = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`);
    c.write(
      `${method} /guarded/api/write HTTP/1.1\r\nHost: ${host}\r\n${lines.join('')}Content-Length: 0\r\nConnection: close\r\n\r\n`,
    );
    await c.closedWithin(10_000);
    const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(c.text)?.[1]);
    return { status, text: c.text };
  };
}

describe('the cross-site guard', () => {
  it('refuses a state-changing request a browser marks as cross-site, whatever its method', async () => {
    const send = await start([]);
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      const reply = await send(method, { 'Sec-Fetch-Site': 'cross-site' });
      expect(reply.status, method).toBe(403);
      expect(reply.text, method).toContain('request.cross_site');
    }
    expect((await send('POST', { 'Sec-Fetch-Site': 'same-site' })).status).toBe(403);
    const refused = await send('POST', { 'Sec-Fetch-Site': 'cross-site' }); // and no Origin
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('A state-changing request from another site is refused');
    // Safe methods pass even when cross-site (an OPTIONS is a CORS preflight, answered 204).
    for (const method of ['GET', 'HEAD', 'OPTIONS'])
      expect(
        (await send(method, { 'Sec-Fetch-Site': 'cross-site', Origin: 'https://evil.test' })).status,
        method,
      ).toBeLessThan(300);
  });

  it('lets same-origin and user-initiated requests through, and requests that are no page’s', async () => {
    const send = await start([]);
    expect((await send('POST', { 'Sec-Fetch-Site': 'same-origin' })).status).toBe(200);
    expect((await send('POST', { 'Sec-Fetch-Site': 'none' })).status).toBe(200);
    expect((await send('POST', {})).status).toBe(200); // curl, a server, a sync client
  });

  it('judges by Origin where the browser sends no Sec-Fetch-Site: its own origin only, in any case', async () => {
    const send = await start([]);
    expect((await send('POST', { Origin: 'http://app.test:8421' })).status).toBe(200);
    expect((await send('POST', { Origin: 'HTTP://APP.TEST:8421' })).status).toBe(200);
    for (const origin of [
      'https://app.test:8421', // another scheme
      'http://app.test', // another port
      'http://app.test:84210',
      'http://app.test:842',
      'http://evil.app.test:8421',
      'http://app.test.evil:8421',
      'null', // an opaque origin (sandboxed frame, file:)
      '',
    ])
      expect((await send('POST', { Origin: origin })).status, origin).toBe(403);
    // A same-origin or user-initiated Sec-Fetch-Site passes whatever the Origin; otherwise the Origin decides.
    expect((await send('POST', { 'Sec-Fetch-Site': 'same-origin', Origin: 'https://evil.test' })).status).toBe(200);
    expect((await send('POST', { 'Sec-Fetch-Site': 'cross-site', Origin: 'https://evil.test' })).status).toBe(403);
  });

  it('never trusts an opaque origin ("null"), even when WithOrigins lists it', async () => {
    const send = await start(['null']);
    expect((await send('POST', { Origin: 'null' })).status).toBe(403);
    expect((await send('POST', { Origin: 'null', 'Sec-Fetch-Site': 'cross-site' })).status).toBe(403);
  });

  it('trusts the origins WithOrigins lists, exactly or by a sub-domain wildcard', async () => {
    const send = await start(['https://partner.test', 'https://*.trusted.test']);
    for (const origin of [
      'https://partner.test',
      'https://PARTNER.test',
      'https://a.trusted.test',
      'https://b.a.trusted.test',
    ])
      expect((await send('POST', { Origin: origin, 'Sec-Fetch-Site': 'cross-site' })).status, origin).toBe(200);
    for (const origin of [
      'https://partner.test.evil',
      'http://partner.test',
      'https://evilpartner.test',
      'https://trusted.test',
      'https://eviltrusted.test',
      'https://a.trusted.test.evil',
      'https://a.trusted.test:8443',
    ])
      expect((await send('POST', { Origin: origin, 'Sec-Fetch-Site': 'cross-site' })).status, origin).toBe(403);
  });
});

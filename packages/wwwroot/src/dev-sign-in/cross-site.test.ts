import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestHost } from '@ack/host/test-support';
import {
  cookieHeader,
  DEV_SIGN_IN,
  DEV_SIGN_OUT,
  postJson,
  startSignInHost,
  whoami,
} from '../test-support/sign-in-fixture.js';

// Every state-changing route a cookie authorises refuses a request a browser sent from another site.
describe('cross-site requests on cookie-authorised routes', () => {
  let t: TestHost;
  let cookie = '';
  const crossSite: Array<Record<string, string>> = [
    { origin: 'http://evil.example', 'sec-fetch-site': 'cross-site' },
    { origin: 'http://evil.example' }, // a browser without Sec-Fetch-Site
    { origin: 'null' }, // a sandboxed frame or a redirect chain
    { 'sec-fetch-site': 'same-site' }, // a sibling sub-domain
  ];
  const signIn = (headers: Record<string, string> = {}) =>
    postJson(`${t.url}${DEV_SIGN_IN}`, { UserID: 'victim' }, { accept: 'application/json', ...headers });

  beforeAll(async () => {
    t = await startSignInHost({ moduleConfig: { BusinessServerUrl: 'http://127.0.0.1:1/x' } });
    cookie = cookieHeader(await signIn());
    expect(await whoami(t.url, cookie)).toMatchObject({ UserID: 'victim' });
  });
  afterAll(() => t.close());

  it('dev sign-out, sign-in POST, htmx writes and the transaction wrapper answer 403 problem', async () => {
    const own = new URL(t.url).origin;
    for (const headers of crossSite) {
      const shown = JSON.stringify(headers);
      const out = await fetch(`${t.url}${DEV_SIGN_OUT}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie, ...headers },
      });
      expect(out.status, shown).toBe(403);
      expect(out.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(await out.json()).toMatchObject({ status: 403, code: 'request.cross_site' });
      expect(out.headers.getSetCookie(), shown).toEqual([]);
      expect((await signIn(headers)).status, shown).toBe(403);
      const created = await fetch(`${t.url}/wwwroot/api/htmx/contacts`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: 'name=Mallory&email=m%40evil.example&phone=1',
      });
      expect(created.status, shown).toBe(403);
      expect(
        (await fetch(`${t.url}/wwwroot/api/htmx/contacts/1`, { method: 'DELETE', headers: { cookie, ...headers } }))
          .status,
        shown,
      ).toBe(403);
      const tx = await fetch(`${t.url}/wwwroot/api/index/transaction`, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/json', ...headers },
        body: '{"commandID":"A|B|C|D"}',
      });
      expect(tx.status, shown).toBe(403);
    }
    // Nothing changed: still signed in, no Mallory.
    expect(await whoami(t.url, cookie)).toMatchObject({ UserID: 'victim' });
    expect(await (await fetch(`${t.url}/wwwroot/api/htmx/contacts`)).text()).not.toContain('Mallory');
    // Reads are not affected.
    expect(
      (
        await fetch(`${t.url}/wwwroot/api/htmx/contacts`, {
          headers: { origin: 'http://evil.example', 'sec-fetch-site': 'cross-site' },
        })
      ).status,
    ).toBe(200);
    // Same-origin pages and clients that are not browsers keep working.
    const sameOrigin: Array<Record<string, string>> = [
      { origin: own, 'sec-fetch-site': 'same-origin' },
      { origin: own },
      { 'sec-fetch-site': 'same-origin' },
      {},
    ];
    for (const headers of sameOrigin) {
      const created = await fetch(`${t.url}/wwwroot/api/htmx/contacts`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: 'name=Alice&email=a%40example.com&phone=1',
      });
      expect(created.status, JSON.stringify(headers)).toBe(303);
    }
    // An origin listed in WithOrigins is trusted (as for CORS).
    expect((await signIn({ origin: 'http://localhost:8421', 'sec-fetch-site': 'cross-site', cookie: '' })).status).toBe(
      200,
    );
    const out = await fetch(`${t.url}${DEV_SIGN_OUT}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, origin: own, 'sec-fetch-site': 'same-origin' },
    });
    expect(out.status).toBe(302);
  });
});

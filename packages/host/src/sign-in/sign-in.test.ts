import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AckModuleFactory } from '../modules/contract.js';
import { createTestHome, startTestHost, testAppSettings, moduleFiles, type TestHost } from '../test-support/index.js';
import { signAuthTicket } from './auth-cookie.js';
import { computeSignExpiry } from './expiry.js';
import { safeLocalReturnUrl } from './return-url.js';
import session from 'express-session';
import { createRevocationList, REVOKED_KEY_PREFIX } from './revocations.js';

// A module that signs in through the host's service, as a future sign-in module would.
const accountModule: AckModuleFactory = (ctx) => {
  const router = ctx.host.createRouter();
  router.get('/in', async (req, res) => {
    await ctx.host.signIn.issue(req, res, { UserID: String(req.query.user), Roles: ['User'], UserName: String(req.query.name ?? '') });
    res.json({ ok: true });
  });
  router.get('/out', async (req, res) => {
    await ctx.host.signIn.clear(req, res);
    res.json({ ok: true });
  });
  router.get('/me', (req, res) => res.json({ user: req.ackUser ?? null }));
  router.get('/touch', (req, res) => {
    Object.assign(req.session!, { planted: true });
    res.json({ ok: true });
  });
  router.get('/session', (req, res) => res.json(req.session ?? null));
  return { routes: [{ mount: '/account/api', handler: router }] };
};

const cookiesOf = (res: Response) => res.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
const me = async (url: string, cookie: string) =>
  ((await (await fetch(`${url}/account/api/me`, { headers: { cookie } })).json()) as { user: { UserID: string } | null }).user;

describe('sign-in cookies (host)', () => {
  let t: TestHost;
  beforeAll(async () => {
    const home = createTestHome(testAppSettings({ AppSettings: { LoadModules: ['account'], CookiePrefixName: 'app' } }), moduleFiles(['account']));
    t = await startTestHost(home, { account: accountModule });
  });
  afterAll(async () => {
    await t.close();
    t.home.remove();
  });

  it('a module signs a user in through ctx.host.signIn and every later request sees req.ackUser', async () => {
    const res = await fetch(`${t.url}/account/api/in?user=alice`);
    const all = res.headers.getSetCookie().map((c) => c.slice(0, c.indexOf('='))).sort();
    // The new session's cookie comes with the set (sign-in regenerates the session).
    expect(all).toContain('ack.Session');
    const names = all.filter((n) => n !== 'ack.Session');
    expect(names).toEqual(['app.AuthenticationScheme', 'app.BearerToken', 'app.ExpireTicks', 'app.Member', 'app.TokenID', 'app.Variable']);
    expect(await me(t.url, cookiesOf(res))).toMatchObject({ UserID: 'alice', Roles: ['User'] });
    expect(await me(t.url, '')).toBeNull();
  });

  it('an expired authentication cookie, even correctly signed, signs nobody in', async () => {
    const key = t.host.keys.key('auth-cookie');
    const user = { ApplicationID: 'HDS', UserID: 'late', SessionKey: '', ApplicationRoleID: '', Roles: [], Claims: {}, LoginedAt: new Date().toISOString() };
    const expired = signAuthTicket({ tid: 'x', exp: Date.now() - 1000, user }, key);
    const valid = signAuthTicket({ tid: 'x', exp: Date.now() + 60_000, user }, key);
    expect(await me(t.url, `app.AuthenticationScheme=${expired}`)).toBeNull();
    expect(await me(t.url, `app.AuthenticationScheme=${valid}`)).toMatchObject({ UserID: 'late' });
    // Signed for another purpose (the session key) is not an authentication cookie.
    const otherPurpose = signAuthTicket({ tid: 'x', exp: Date.now() + 60_000, user }, t.host.keys.key('antiforgery'));
    expect(await me(t.url, `app.AuthenticationScheme=${otherPurpose}`)).toBeNull();
  });

  it('clear() expires exactly the cookie set, not other cookies with the prefix', async () => {
    const res = await fetch(`${t.url}/account/api/out`, { headers: { cookie: 'app.Other=1' } });
    const cleared = res.headers.getSetCookie();
    expect(cleared.map((c) => c.slice(0, c.indexOf('='))).sort()).toEqual(['app.AuthenticationScheme', 'app.BearerToken', 'app.ExpireTicks', 'app.Member', 'app.TokenID', 'app.Variable']);
    for (const c of cleared) expect(c).toMatch(/Expires=Thu, 01 Jan 1970/);
  });

  it('an account too large for a cookie is a 400 and writes no cookie', async () => {
    const res = await fetch(`${t.url}/account/api/in?user=big&name=${'x'.repeat(4000)}`);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { code: string }).code).toBe('sign_in.account_too_large');
    expect(res.headers.getSetCookie()).toEqual([]);
  });

  // Sessions and sign-out.
  const sessionCookie = (res: Response) => res.headers.getSetCookie().find((c) => c.startsWith('ack.Session='))?.split(';')[0];
  const sessionOf = async (cookie: string) => (await (await fetch(`${t.url}/account/api/session`, { headers: { cookie } })).json()) as Record<string, unknown> | null;

  it('sign-in regenerates the session (a planted session id is not the one after) and keeps the member in it', async () => {
    const planted = sessionCookie(await fetch(`${t.url}/account/api/touch`))!;
    expect(planted).toBeDefined();
    expect(await sessionOf(planted)).toMatchObject({ planted: true });
    const signIn = await fetch(`${t.url}/account/api/in?user=fixated`, { headers: { cookie: planted } });
    const after = sessionCookie(signIn)!;
    expect(after).toBeDefined();
    expect(after).not.toBe(planted);
    // The planted id holds nothing any more; the new one holds the member, not the old data.
    expect(await sessionOf(planted)).not.toHaveProperty('app.Member');
    expect(await sessionOf(planted)).not.toHaveProperty('planted');
    const fresh = await sessionOf(after);
    expect(fresh).toMatchObject({ 'app.Member': { UserID: 'fixated' } });
    expect(fresh).not.toHaveProperty('planted');
  });

  it('sign-out destroys the session and a replayed authentication cookie is refused', async () => {
    const signIn = await fetch(`${t.url}/account/api/in?user=leaver`);
    const cookies = cookiesOf(signIn);
    expect(await me(t.url, cookies)).toMatchObject({ UserID: 'leaver' });
    expect(await sessionOf(sessionCookie(signIn)!)).toMatchObject({ 'app.Member': { UserID: 'leaver' } });
    const out = await fetch(`${t.url}/account/api/out`, { headers: { cookie: cookies } });
    expect(out.status).toBe(200);
    expect(out.headers.getSetCookie().some((c) => /^ack\.Session=;/.test(c))).toBe(true);
    // The browser forgot the cookies; an attacker who copied them replays them: refused.
    expect(await me(t.url, cookies)).toBeNull();
    expect(await sessionOf(sessionCookie(signIn)!)).not.toHaveProperty('app.Member');
    // Signing in again gives a new, valid cookie.
    expect(await me(t.url, cookiesOf(await fetch(`${t.url}/account/api/in?user=leaver`)))).toMatchObject({ UserID: 'leaver' });
  });
});

describe('sign-out list', () => {
  it('is shared through a session store: a sign-out recorded by one process is refused by another', async () => {
    const store = new session.MemoryStore();
    const one = createRevocationList(store);
    const other = createRevocationList(store);
    await one.revoke('tid-1', Date.now() + 60_000);
    await one.revoke('tid-gone', Date.now() - 1);
    expect(await other.isRevoked('tid-1')).toBe(true);
    expect(await other.isRevoked('tid-2')).toBe(false);
    expect(await other.isRevoked('tid-gone')).toBe(false);
    // Stored under the reserved prefix, as a session that expires with the cookie.
    const stored = await new Promise((r) => store.get(`${REVOKED_KEY_PREFIX}tid-1`, (_e, s) => r(s)));
    expect(stored).toMatchObject({ revoked: true });
  });

  it('is bounded in memory without a store (oldest sign-outs go first)', async () => {
    const list = createRevocationList(undefined, 3);
    for (const id of ['a', 'b', 'c', 'd']) await list.revoke(id, Date.now() + 60_000);
    expect(await list.isRevoked('a')).toBe(false);
    for (const id of ['b', 'c', 'd']) expect(await list.isRevoked(id)).toBe(true);
  });
});

describe('computeSignExpiry', () => {
  const now = new Date(2026, 10, 21, 16, 30, 15); // local time
  it('above 0: that many minutes', () => {
    expect(computeSignExpiry(30, now).getTime() - now.getTime()).toBe(30 * 60_000);
  });
  it('below 0: hour |N| of the next day (local)', () => {
    expect(computeSignExpiry(-1, now)).toEqual(new Date(2026, 10, 22, 1, 0, 0));
    expect(computeSignExpiry(-23, now)).toEqual(new Date(2026, 10, 22, 23, 0, 0));
    expect(computeSignExpiry(-5, new Date(2026, 11, 31, 23, 59))).toEqual(new Date(2027, 0, 1, 5, 0, 0));
  });
  it('0, or an hour that is not one: one day', () => {
    expect(computeSignExpiry(0, now)).toEqual(new Date(2026, 10, 22, 16, 30, 15));
    expect(computeSignExpiry(-24, now)).toEqual(new Date(2026, 10, 22, 16, 30, 15));
  });
});

describe('safeLocalReturnUrl', () => {
  it('keeps local paths', () => {
    for (const ok of ['/', '/a', '/view/HDS/x.html?y=1#z', '/a%20b', '/%E3%81%82']) expect(safeLocalReturnUrl(ok)).toBe(ok);
  });
  it('replaces everything else with /', () => {
    for (const bad of [undefined, 42, ['/a'], '', 'a', '//x', '/\\x', '\\x', 'http://x', '/%2F%2Fx', '/%5Cx', '/%252F%252Fx',
      '/%25252F%25252Fx', '/\tx', '/%00', '/%E0%A4%A', 'x'.repeat(3000)]) {
      expect(safeLocalReturnUrl(bad), String(bad)).toBe('/');
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AckModuleFactory } from '../modules/contract.js';
import {
  createTestHome,
  startTestHost,
  testAppSettings,
  testDatabases,
  moduleFiles,
  type TestHost,
} from '../test-support/index.js';
import { sharedSignInSettings, signInRouter, withTwoAccountHosts } from '../test-support/account-module.js';
import { signAuthTicket } from './auth-cookie.js';
import { computeSignExpiry } from './expiry.js';
import { safeLocalReturnUrl } from './return-url.js';
import crypto from 'node:crypto';
import knexFactory from 'knex';
import { createClient } from 'redis';
import { createRevocationList, REVOKED_KEY_PREFIX } from './revocations.js';

// A module that signs in through the host's service, as a future sign-in module would.
const accountModule: AckModuleFactory = (ctx) => {
  const router = signInRouter(ctx, { userName: true });
  router.get('/touch', (req, res) => {
    Object.assign(req.session!, { planted: true });
    res.json({ ok: true });
  });
  router.get('/session', (req, res) => res.json(req.session ?? null));
  router.get('/cookies', (req, res) => res.json(req.cookies));
  return { routes: [{ mount: '/account/api', handler: router }] };
};

const cookiesOf = (res: Response) =>
  res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
const me = async (url: string, cookie: string) =>
  (
    (await (await fetch(`${url}/account/api/me`, { headers: { cookie } })).json()) as {
      user: { UserID: string } | null;
    }
  ).user;

describe('sign-in cookies (host)', () => {
  let t: TestHost;
  beforeAll(async () => {
    const home = createTestHome(
      testAppSettings({ AppSettings: { LoadModules: ['account'], CookiePrefixName: 'app' } }),
      moduleFiles(['account']),
    );
    t = await startTestHost(home, { account: accountModule });
  });
  afterAll(async () => {
    await t.close();
    t.home.remove();
  });

  it('a module signs a user in through ctx.host.signIn and every later request sees req.ackUser', async () => {
    const res = await fetch(`${t.url}/account/api/in?user=alice`);
    const all = res.headers
      .getSetCookie()
      .map((c) => c.slice(0, c.indexOf('=')))
      .sort();
    // The new session's cookie comes with the set (sign-in regenerates the session).
    expect(all).toContain('ack.Session');
    const names = all.filter((n) => n !== 'ack.Session');
    expect(names).toEqual([
      'app.AuthenticationScheme',
      'app.BearerToken',
      'app.ExpireTicks',
      'app.Member',
      'app.TokenID',
      'app.Variable',
    ]);
    expect(await me(t.url, cookiesOf(res))).toMatchObject({ UserID: 'alice', Roles: ['User'] });
    expect(await me(t.url, '')).toBeNull();
  });

  it('an expired authentication cookie, even correctly signed, signs nobody in', async () => {
    const key = t.host.keys.key('auth-cookie');
    const user = {
      ApplicationID: 'HDS',
      UserID: 'late',
      SessionKey: '',
      ApplicationRoleID: '',
      Roles: [],
      Claims: {},
      LoginedAt: new Date().toISOString(),
    };
    const expired = signAuthTicket({ tid: 'x', exp: Date.now() - 1000, user }, key);
    const valid = signAuthTicket({ tid: 'x', exp: Date.now() + 60_000, user }, key);
    expect(await me(t.url, `app.AuthenticationScheme=${expired}`)).toBeNull();
    expect(await me(t.url, `app.AuthenticationScheme=${valid}`)).toMatchObject({ UserID: 'late' });
    // Signed for another purpose (the session key) is not an authentication cookie.
    const otherPurpose = signAuthTicket({ tid: 'x', exp: Date.now() + 60_000, user }, t.host.keys.key('antiforgery'));
    expect(await me(t.url, `app.AuthenticationScheme=${otherPurpose}`)).toBeNull();
  });

  it('modules read req.cookies as cookie-parser gives it, text only (a j: JSON cookie is dropped)', async () => {
    const res = await fetch(`${t.url}/account/api/cookies`, {
      headers: { cookie: 'plain=a%20b; quoted="q"; plain=second; json=j%3A%7B%22a%22%3A1%7D; notjson=j%3A%7B' },
    });
    expect(await res.json()).toEqual({ plain: 'a b', quoted: 'q', notjson: 'j:{' });
    // Nearest neighbour: no Cookie header, no cookies.
    expect(await (await fetch(`${t.url}/account/api/cookies`)).json()).toEqual({});
  });

  it('clear() expires exactly the cookie set, not other cookies with the prefix', async () => {
    const res = await fetch(`${t.url}/account/api/out`, { headers: { cookie: 'app.Other=1' } });
    const cleared = res.headers.getSetCookie();
    expect(cleared.map((c) => c.slice(0, c.indexOf('='))).sort()).toEqual([
      'app.AuthenticationScheme',
      'app.BearerToken',
      'app.ExpireTicks',
      'app.Member',
      'app.TokenID',
      'app.Variable',
    ]);
    for (const c of cleared) expect(c).toMatch(/Expires=Thu, 01 Jan 1970/);
  });

  it('an account too large for a cookie is a 400 and writes no cookie', async () => {
    const res = await fetch(`${t.url}/account/api/in?user=big&name=${'x'.repeat(4000)}`);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { code: string }).code).toBe('sign_in.account_too_large');
    expect(res.headers.getSetCookie()).toEqual([]);
  });

  // Sessions and sign-out.
  const sessionCookie = (res: Response) =>
    res.headers
      .getSetCookie()
      .find((c) => c.startsWith('ack.Session='))
      ?.split(';')[0];
  const sessionOf = async (cookie: string) =>
    (await (await fetch(`${t.url}/account/api/session`, { headers: { cookie } })).json()) as Record<
      string,
      unknown
    > | null;

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
    expect(await me(t.url, cookiesOf(await fetch(`${t.url}/account/api/in?user=leaver`)))).toMatchObject({
      UserID: 'leaver',
    });
  });
});

describe('sign-out list', () => {
  it('is announced to the other workers, which keep it as their own', async () => {
    const announced: Array<[string, number]> = [];
    const one = createRevocationList({ announce: (tokenId, expiresAt) => announced.push([tokenId, expiresAt]) });
    const other = createRevocationList();
    const until = Date.now() + 60_000;
    await one.revoke('tid-1', until);
    await one.revoke('tid-gone', Date.now() - 1);
    expect(announced).toEqual([['tid-1', until]]);
    expect(await other.isRevoked('tid-1')).toBe(false);
    for (const [tokenId, expiresAt] of announced) other.heard(tokenId, expiresAt);
    expect(await other.isRevoked('tid-1')).toBe(true);
    expect(await other.isRevoked('tid-gone')).toBe(false);
  });

  it('forgets no live sign-out past maxEntries: new sign-ins are refused instead', async () => {
    const list = createRevocationList({ maxEntries: 3 });
    for (const id of ['a', 'b']) await list.revoke(id, Date.now() + 60_000);
    expect(list.acceptsSignIns()).toBe(true);
    await list.revoke('c', Date.now() + 60_000);
    expect(list.acceptsSignIns()).toBe(false);
    await list.revoke('d', Date.now() + 60_000);
    for (const id of ['a', 'b', 'c', 'd']) expect(await list.isRevoked(id)).toBe(true);
  });
});

// Against the real Redis and PostgreSQL of the development machine and CI (docs/sessions.md), each
// run under its own key prefix or schema.
const run = crypto.randomBytes(4).toString('hex');
interface StoreUnderTest {
  name: string;
  state: Record<string, unknown>;
  /** When the store itself drops the record of `id`, in ms since the epoch. */
  expiresAt(id: string): Promise<number>;
  cleanUp(): Promise<void>;
}
const stores: Array<() => StoreUnderTest> = [
  () => {
    const prefix = `ack-test:${run}:signout:`;
    const redis = createClient({ socket: testDatabases().redis });
    const ready = redis.connect();
    return {
      name: 'Redis',
      state: {
        CacheType: 'Redis',
        RedisConnectionString: testDatabases().redisConnectionString,
        RedisKeyPrefix: prefix,
      },
      async expiresAt(id) {
        await ready;
        return Date.now() + (await redis.pTTL(prefix + id));
      },
      async cleanUp() {
        await ready;
        for (const k of await redis.keys(`${prefix}*`)) await redis.del(k);
        redis.destroy();
      },
    };
  },
  () => {
    const schema = `ack_signout_${run}`;
    const pg = knexFactory({
      client: 'pg',
      connection: testDatabases().postgresConnection,
    });
    return {
      name: 'PostgreSQL',
      state: {
        CacheType: 'PostgreSql',
        PostgreSqlConnectionString: testDatabases().postgresConnectionString,
        PostgreSqlSchemaName: schema,
        PostgreSqlTableName: 'SessionData',
      },
      async expiresAt(id) {
        const row = (await pg.withSchema(schema).table('SessionData').where('sid', id).first()) as {
          expires: string | number;
        };
        return Number(row.expires);
      },
      async cleanUp() {
        await pg.raw('drop schema if exists ?? cascade', [schema]);
        await pg.destroy();
      },
    };
  },
];

describe.each([
  { store: 'Redis', make: stores[0]! },
  { store: 'PostgreSQL', make: stores[1]! },
])('sign-out through a shared session store ($store)', ({ make }) => {
  it('a cookie signed out on one host is refused by another, for as long as the cookie lives (not the idle time-out)', async () => {
    const store = make();
    const settings = sharedSignInSettings(`sign-out-test-key-${run}`, { IdleTimeoutMinutes: 1, ...store.state });
    try {
      await withTwoAccountHosts(settings, accountModule, async (a, b) => {
        const cookies = cookiesOf(await fetch(`${a.url}/account/api/in?user=roamer`));
        expect(await me(b.url, cookies)).toMatchObject({ UserID: 'roamer' });
        await fetch(`${a.url}/account/api/out`, { headers: { cookie: cookies } });
        expect(await me(a.url, cookies), store.name).toBeNull();
        expect(await me(b.url, cookies), store.name).toBeNull();
        // The store keeps the sign-out until the cookie's own expiry (two hours), not for the
        // one-minute idle time-out of sessions.
        const tid = decodeURIComponent(/app\.TokenID=([^;]+)/.exec(cookies)![1]!)
          .split('|')
          .pop()!;
        expect(await store.expiresAt(`${REVOKED_KEY_PREFIX}${tid}`), store.name).toBeGreaterThan(
          Date.now() + 100 * 60_000,
        );
      });
    } finally {
      await store.cleanUp();
    }
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
    for (const ok of ['/', '/a', '/view/HDS/x.html?y=1#z', '/a%20b', '/%E3%81%82'])
      expect(safeLocalReturnUrl(ok)).toBe(ok);
  });
  it('replaces everything else with /', () => {
    for (const bad of [
      undefined,
      42,
      ['/a'],
      '',
      'a',
      '//x',
      '/\\x',
      '\\x',
      'http://x',
      '/%2F%2Fx',
      '/%5Cx',
      '/%252F%252Fx',
      '/%25252F%25252Fx',
      '/\tx',
      '/%00',
      '/%E0%A4%A',
      'x'.repeat(3000),
    ]) {
      expect(safeLocalReturnUrl(bad), String(bad)).toBe('/');
    }
  });
});

// Two hosts sharing a real session store (Redis, MariaDB), as behind a load balancer: a request
// whose session is the one its sign-in started skips the sign-out read, and every way of replaying
// a signed-out authentication cookie is still refused (docs/dev-sign-in.md "Sign-out holds").
import crypto from 'node:crypto';
import knexFactory from 'knex';
import { createClient } from 'redis';
import { describe, expect, it } from 'vitest';
import type { AckModuleFactory } from '../modules/contract.js';
import { testDatabases } from '../test-support/index.js';
import type { TestHost } from '../test-support/index.js';
import { sharedSignInSettings, signInRouter, withTwoAccountHosts } from '../test-support/account-module.js';
import { REVOKED_KEY_PREFIX } from './revocations.js';

// Released by the test: a request that holds its session while a sign-out happens elsewhere.
let release: () => void = () => {};
let held: () => void = () => {};

const accountModule: AckModuleFactory = (ctx) => {
  const router = signInRouter(ctx);
  // A session of its own, signed in or not (a screen that keeps something in the session).
  router.get('/keep', (req, res) => {
    Object.assign(req.session!, { kept: String(req.query.value ?? 'x') });
    res.json({ ok: true });
  });
  router.get('/keep-later', async (req, res) => {
    await new Promise<void>((resolve) => {
      release = resolve;
      held();
    });
    Object.assign(req.session!, { kept: 'late' });
    res.json({ ok: true });
  });
  return { routes: [{ mount: '/account/api', handler: router }] };
};

const run = crypto.randomBytes(4).toString('hex');

interface StoreUnderTest {
  name: string;
  state: Record<string, unknown>;
  /** Writes a record straight into the store, as another host would. */
  put(id: string, value: object, ttlMs: number): Promise<void>;
  has(id: string): Promise<boolean>;
  cleanUp(): Promise<void>;
}

function redisStore(): StoreUnderTest {
  const prefix = `ack-test:${run}:fast-path:`;
  const redis = createClient({ socket: testDatabases().redis });
  const ready = redis.connect();
  return {
    name: 'Redis',
    state: { CacheType: 'Redis', RedisConnectionString: testDatabases().redisConnectionString, RedisKeyPrefix: prefix },
    async put(id, value, ttlMs) {
      await ready;
      await redis.set(prefix + id, JSON.stringify(value), { PX: ttlMs });
    },
    async has(id) {
      await ready;
      return (await redis.exists(prefix + id)) === 1;
    },
    async cleanUp() {
      await ready;
      for (const k of await redis.keys(`${prefix}*`)) await redis.del(k);
      redis.destroy();
    },
  };
}

function mariaDbStore(): StoreUnderTest {
  const schema = `ack_fast_path_${run}`;
  const db = knexFactory({ client: 'mysql2', connection: testDatabases().mysqlConnection });
  const rows = () => db.withSchema(schema).table('SessionData');
  return {
    name: 'MariaDB',
    state: {
      CacheType: 'MySql',
      MySqlConnectionString: testDatabases().mysqlConnectionString,
      MySqlSchemaName: schema,
      MySqlTableName: 'SessionData',
    },
    async put(id, value, ttlMs) {
      await rows().insert({ sid: id, sess: JSON.stringify(value), expires: Date.now() + ttlMs });
    },
    async has(id) {
      return (await rows().where('sid', id).andWhere('expires', '>', Date.now()).first()) !== undefined;
    },
    async cleanUp() {
      await db.raw('drop database if exists ??', [schema]);
      await db.destroy();
    },
  };
}

const cookiesOf = (res: Response) =>
  res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0]!)
    .filter((c) => !/=($|;)/.test(c));
const pick = (cookies: string[], name: string) => cookies.filter((c) => c.startsWith(`${name}=`));
const join = (...parts: string[][]) => parts.flat().join('; ');
const get = (url: string, cookie: string) => fetch(url, { headers: { cookie } });
const me = async (url: string, cookie: string) =>
  ((await (await get(`${url}/account/api/me`, cookie)).json()) as { user: { UserID: string } | null }).user;
const sessionIdOf = (cookie: string) => /^s:([^.]+)\./.exec(decodeURIComponent(cookie.split('=')[1]!))![1]!;
const tokenIdOf = (cookies: string[]) => decodeURIComponent(pick(cookies, 'app.TokenID')[0]!).split('|').pop()!;

async function withTwoHosts(
  make: () => StoreUnderTest,
  body: (a: TestHost, b: TestHost, store: StoreUnderTest) => Promise<void>,
) {
  const store = make();
  const settings = sharedSignInSettings(`fast-path-test-key-${run}`, store.state);
  try {
    await withTwoAccountHosts(settings, accountModule, (a, b) => body(a, b, store));
  } finally {
    await store.cleanUp();
  }
}

describe.each([
  { name: 'Redis', make: redisStore },
  { name: 'MariaDB', make: mariaDbStore },
])('signed-in requests over a shared store ($name)', ({ make }) => {
  it('a request whose session is its sign-in’s skips the sign-out read; one without that session reads it', async () => {
    await withTwoHosts(make, async (a, b, store) => {
      const cookies = cookiesOf(await get(`${a.url}/account/api/in?user=fast`, ''));
      const auth = pick(cookies, 'app.AuthenticationScheme');
      const session = pick(cookies, 'ack.Session');
      // A sign-out record another host has written and whose session it has not destroyed yet:
      // only a request that does not find the sign-in's session asks for that record.
      await store.put(
        `${REVOKED_KEY_PREFIX}${tokenIdOf(cookies)}`,
        { revoked: true, until: Date.now() + 60_000 },
        60_000,
      );
      expect(await me(b.url, join(auth, session))).toMatchObject({ UserID: 'fast' });
      expect(await me(b.url, join(auth))).toBeNull();
    });
  });

  it('a signed-out authentication cookie is refused with its old session, with none, and with a fresh one', async () => {
    await withTwoHosts(make, async (a, b) => {
      const cookies = cookiesOf(await get(`${a.url}/account/api/in?user=replayed`, ''));
      const auth = pick(cookies, 'app.AuthenticationScheme');
      const oldSession = pick(cookies, 'ack.Session');
      const fresh = pick(cookiesOf(await get(`${b.url}/account/api/keep`, '')), 'ack.Session');
      const replays = {
        'old session': join(auth, oldSession),
        'no session': join(auth),
        'fresh session': join(auth, fresh),
      };
      // Nearest neighbours: the same cookies before sign-out sign in, on both hosts.
      for (const [what, cookie] of Object.entries(replays))
        for (const host of [a, b]) expect(await me(host.url, cookie), what).toMatchObject({ UserID: 'replayed' });
      await get(`${b.url}/account/api/out`, join(auth, oldSession));
      for (const [what, cookie] of Object.entries(replays))
        for (const host of [a, b]) expect(await me(host.url, cookie), what).toBeNull();
    });
  });

  it('a sign-out that presents only the authentication cookie still ends the session its sign-in started', async () => {
    await withTwoHosts(make, async (a, b, store) => {
      const cookies = cookiesOf(await get(`${a.url}/account/api/in?user=lost`, ''));
      const auth = pick(cookies, 'app.AuthenticationScheme');
      const oldSession = pick(cookies, 'ack.Session');
      // The browser lost its session cookie (it lives only as long as the browser), then signed out.
      await get(`${b.url}/account/api/out`, join(auth));
      expect(await store.has(sessionIdOf(oldSession[0]!))).toBe(false);
      for (const host of [a, b]) expect(await me(host.url, join(auth, oldSession))).toBeNull();
    });
  });

  it('a request still holding the session when it is signed out elsewhere does not save it back', async () => {
    await withTwoHosts(make, async (a, b, store) => {
      const cookies = cookiesOf(await get(`${a.url}/account/api/in?user=late`, ''));
      const auth = pick(cookies, 'app.AuthenticationScheme');
      const oldSession = pick(cookies, 'ack.Session');
      const sid = sessionIdOf(oldSession[0]!);
      // Nearest neighbour: a session that is still there is saved as usual.
      await get(`${a.url}/account/api/keep?value=early`, join(auth, oldSession));
      expect(await store.has(sid)).toBe(true);
      const waiting = new Promise<void>((resolve) => (held = resolve));
      const late = get(`${a.url}/account/api/keep-later`, join(auth, oldSession));
      await waiting;
      await get(`${b.url}/account/api/out`, join(auth, oldSession));
      release();
      expect((await late).status).toBe(200);
      for (const host of [a, b]) expect(await me(host.url, join(auth, oldSession))).toBeNull();
      expect(await store.has(sid)).toBe(false);
    });
  });
});

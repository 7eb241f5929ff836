import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createClient } from 'redis';
import { afterAll, describe, expect, it } from 'vitest';
import type { AckModuleFactory } from '../modules/contract.js';
import { moduleFiles, probeModule, testAppSettings, testDatabases, useTestHosts } from '../test-support/index.js';
import { createKeyring } from './keyring.js';

// Signing-key rotation (docs/sessions.md): the current key signs; a previous key still verifies
// sign-in and session cookies until its ValidUntil, across hosts that share the key settings.
const hosts = useTestHosts();
const prefix = `ack-test:rotation:${crypto.randomBytes(4).toString('hex')}:`;
const OLD = 'old-signing-key-0123456789abcdef';
const NEW = 'new-signing-key-fedcba9876543210';

afterAll(async () => {
  const redis = createClient({ socket: testDatabases().redis });
  await redis.connect();
  for (const k of await redis.keys(`${prefix}*`)) await redis.del(k);
  redis.destroy();
});

const account: AckModuleFactory = (ctx) => {
  const router = ctx.host.createRouter();
  router.get('/in', async (req, res) => {
    await ctx.host.signIn.issue(req, res, { UserID: 'alice', Roles: ['User'] });
    res.json({ ok: true });
  });
  router.get('/me', (req, res) => res.json({ user: req.ackUser?.UserID ?? null }));
  return { routes: [{ mount: '/account/api', handler: router }] };
};

async function start(security: Record<string, unknown>) {
  const home = hosts.home(
    testAppSettings({
      AppSettings: {
        LoadModules: ['account', 'probe'],
        CookiePrefixName: 'app',
        Security: security,
        SessionState: {
          CacheType: 'Redis',
          RedisConnectionString: testDatabases().redisConnectionString,
          RedisKeyPrefix: prefix,
        },
      },
    }),
    moduleFiles(['account', 'probe']),
  );
  return (await hosts.start(home, { account, probe: probeModule() })).url;
}

const cookiesOf = (res: Response) =>
  res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
const me = async (url: string, cookie: string) =>
  ((await (await fetch(`${url}/account/api/me`, { headers: { cookie } })).json()) as { user: string | null }).user;
const count = async (url: string, cookie: string) =>
  ((await (await fetch(`${url}/probe/api/count`, { headers: { cookie } })).json()) as { count: number }).count;

describe('signing-key rotation', () => {
  it('a previous key verifies until its ValidUntil; the current key signs', () => {
    const until = '2030-01-01T00:00:00Z';
    const rotated = createKeyring(NEW, '/nonexistent/never-read.key', [{ Key: OLD, ValidUntil: until }]);
    const old = createKeyring(OLD, '/nonexistent/never-read.key');
    expect(rotated.key('auth-cookie')).toEqual(createKeyring(NEW, '/nonexistent/x').key('auth-cookie'));
    expect(rotated.keys('auth-cookie', Date.parse(until) - 1)).toEqual([
      rotated.key('auth-cookie'),
      old.key('auth-cookie'),
    ]);
    expect(rotated.keys('auth-cookie', Date.parse(until))).toEqual([rotated.key('auth-cookie')]);
  });

  it('a previous key that came from the key file is named by its content with file:', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-keyfile-'));
    try {
      const keyFile = path.join(dir, 'signing.key');
      const fromFile = createKeyring('', keyFile);
      expect(fromFile.source).toBe('file');
      const rotated = createKeyring(NEW, keyFile, [
        { Key: `file:${fs.readFileSync(keyFile, 'utf8')}`, ValidUntil: '2999-01-01' },
      ]);
      expect(rotated.keys('session')[1]).toEqual(fromFile.key('session'));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('sign-in and session cookies signed with the old key are accepted by hosts on the new key until the date, then refused', async () => {
    const before = await start({ SigningKey: OLD });
    // Sign-in gives the browser a new session and its cookie; the count goes into that session.
    const cookie = cookiesOf(await fetch(`${before}/account/api/in`));
    expect(cookie).toMatch(/ack\.Session=/);
    expect(await count(before, cookie)).toBe(1);
    expect(await me(before, cookie)).toBe('alice');

    const future = new Date(Date.now() + 3_600_000).toISOString();
    const rotated = await start({ SigningKey: NEW, PreviousSigningKeys: [{ Key: OLD, ValidUntil: future }] });
    expect(await me(rotated, cookie)).toBe('alice');
    expect(await count(rotated, cookie)).toBe(2);

    // New cookies are signed with the new key: a host that knows only the old key refuses them.
    const fresh = cookiesOf(await fetch(`${rotated}/account/api/in`));
    expect(await me(rotated, fresh)).toBe('alice');
    expect(await me(before, fresh)).toBeNull();

    const past = new Date(Date.now() - 1000).toISOString();
    const expired = await start({ SigningKey: NEW, PreviousSigningKeys: [{ Key: OLD, ValidUntil: past }] });
    expect(await me(expired, cookie)).toBeNull();
    expect(await count(expired, cookie)).toBe(1);
  });

  it('refuses a previous key entry without a date it can read', async () => {
    const home = hosts.home(
      testAppSettings({
        AppSettings: { Security: { SigningKey: NEW, PreviousSigningKeys: [{ Key: OLD, ValidUntil: 'next tuesday' }] } },
      }),
    );
    await expect(hosts.start(home)).rejects.toThrow(
      /PreviousSigningKeys:0:ValidUntil: expected an ISO 8601 date such as "2026-12-31T00:00:00Z"/,
    );
  });
});

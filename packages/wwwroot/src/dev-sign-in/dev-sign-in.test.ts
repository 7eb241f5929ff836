import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestHost } from '@ack/host/test-support';
import {
  cookieHeader,
  cookieValue,
  DEV_SIGN_IN,
  DEV_SIGN_OUT,
  postJson,
  setCookies,
  startSignInHost,
  whoami,
} from '../test-support/sign-in-fixture.js';

const COOKIE_NAMES = ['TokenID', 'ExpireTicks', 'Member', 'Variable', 'BearerToken', 'AuthenticationScheme'].map(
  (n) => `tst.${n}`,
);
/** Sign-in regenerates the session, so its cookie comes with the set (and goes with sign-out). */
const WITH_SESSION = [...COOKIE_NAMES, 'ack.Session'];
const DEV_ACCOUNT = {
  UserNo: '7',
  UserID: 'dev1',
  UserName: 'Dev One',
  Email: 'dev1@example.com',
  Roles: ['Developer'],
  BirthDate: '',
  Gender: '',
};

describe('dev sign-in gate', () => {
  const cases: Array<[string, Record<string, unknown>]> = [
    ['IsEnabledDevAutoSignIn false', { IsEnabledDevAutoSignIn: false, RunningEnvironment: 'D' }],
    ['RunningEnvironment P', { IsEnabledDevAutoSignIn: true, RunningEnvironment: 'P' }],
    ['RunningEnvironment S', { IsEnabledDevAutoSignIn: true, RunningEnvironment: 'S' }],
  ];
  for (const [name, appSettings] of cases) {
    it(`is a plain 404 for GET and POST when ${name}, and signs nobody in`, async () => {
      const t = await startSignInHost({ appSettings, moduleConfig: { DevAutoSignIn: DEV_ACCOUNT } });
      try {
        const get = await fetch(`${t.url}${DEV_SIGN_IN}`, { redirect: 'manual' });
        expect(get.status).toBe(404);
        expect(get.headers.getSetCookie()).toEqual([]);
        const post = await postJson(`${t.url}${DEV_SIGN_IN}`, { UserID: 'x' });
        expect(post.status).toBe(404);
        expect(post.headers.getSetCookie()).toEqual([]);
        // The same answer as a path that never existed.
        const none = await fetch(`${t.url}/wwwroot/api/dev-account/no-such-route`);
        expect(await post.json()).toEqual(await none.json());
      } finally {
        await t.close();
      }
    });
  }
});

describe('dev sign-in', () => {
  let t: TestHost;
  beforeAll(async () => {
    t = await startSignInHost({ moduleConfig: { DevAutoSignIn: DEV_ACCOUNT } });
  });
  afterAll(() => t.close());

  it('GET signs in the configured account with the whole cookie set and redirects to returnUrl', async () => {
    const res = await fetch(`${t.url}${DEV_SIGN_IN}?returnUrl=${encodeURIComponent('/screens/main.html?tab=2')}`, {
      redirect: 'manual',
    });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/screens/main.html?tab=2');
    const cookies = setCookies(res);
    expect([...cookies.keys()].sort()).toEqual([...WITH_SESSION].sort());
    const auth = cookies.get('tst.AuthenticationScheme')!;
    expect(auth).toMatch(/; HttpOnly/i);
    expect(auth).toMatch(/; SameSite=Lax/i);
    expect(auth).not.toMatch(/; Secure/i);
    expect(auth).toMatch(/; Path=\//);
    for (const name of COOKIE_NAMES.filter((n) => n !== 'tst.AuthenticationScheme')) {
      expect(cookies.get(name)).not.toMatch(/HttpOnly/i); // screens read them
      expect(cookies.get(name)).toMatch(/; SameSite=Lax/i);
    }
    const member = JSON.parse(Buffer.from(cookieValue(cookies.get('tst.Member')!), 'base64').toString('utf8'));
    expect(member).toMatchObject({
      UserID: 'dev1',
      UserName: 'Dev One',
      UserNo: '7',
      Email: 'dev1@example.com',
      Roles: ['Developer'],
    });
    expect(member).not.toHaveProperty('BirthDate'); // empty string = not set
    expect(cookieValue(cookies.get('tst.TokenID')!)).toMatch(/^D\|HOSTNAME\|ACK\|HDS\|[0-9a-f]{32}$/);
    const variable = JSON.parse(Buffer.from(cookieValue(cookies.get('tst.Variable')!), 'base64').toString('utf8'));
    expect(variable.ClientIP).toBe('127.0.0.1');
    expect(await whoami(t.url, cookieHeader(res))).toMatchObject({ UserID: 'dev1', Roles: ['Developer'] });
  });

  it('POST signs in the account of the body; Accept: application/json gets 200 with the account', async () => {
    const redirect = await postJson(`${t.url}${DEV_SIGN_IN}?returnUrl=/home`, {
      UserID: 'poster',
      Roles: ['User', 'Manager'],
      BirthDate: '2000-02-29',
      Gender: 'F',
    });
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get('location')).toBe('/home');
    expect(await whoami(t.url, cookieHeader(redirect))).toMatchObject({
      UserID: 'poster',
      Roles: ['User', 'Manager'],
      BirthDate: '2000-02-29',
      Gender: 'F',
    });

    const json = await postJson(
      `${t.url}${DEV_SIGN_IN}`,
      { UserID: 'scripted', Email: 's@example.com' },
      { accept: 'application/json' },
    );
    expect(json.status).toBe(200);
    const body = (await json.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ UserID: 'scripted', Email: 's@example.com', Roles: [] });
    expect([...setCookies(json).keys()].sort()).toEqual([...WITH_SESSION].sort());
  });

  it('an already signed-in request redirects to returnUrl whatever its body, without new cookies', async () => {
    const first = await postJson(`${t.url}${DEV_SIGN_IN}`, { UserID: 'already' });
    const cookie = cookieHeader(first);
    const attempts = [
      postJson(`${t.url}${DEV_SIGN_IN}?returnUrl=/back`, '{not json', { cookie }),
      postJson(`${t.url}${DEV_SIGN_IN}?returnUrl=/back`, { UserID: '' }, { cookie }),
      fetch(`${t.url}${DEV_SIGN_IN}?returnUrl=/back`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie, 'content-type': 'text/plain' },
        body: 'x',
      }),
      fetch(`${t.url}${DEV_SIGN_IN}?returnUrl=/back`, { redirect: 'manual', headers: { cookie } }),
      postJson(`${t.url}${DEV_SIGN_IN}?returnUrl=//evil.example`, '{', { cookie }),
    ];
    const answers = await Promise.all(attempts);
    expect(answers.map((r) => r.status)).toEqual([302, 302, 302, 302, 302]);
    expect(answers.map((r) => r.headers.get('location'))).toEqual(['/back', '/back', '/back', '/back', '/']);
    for (const r of answers) expect(r.headers.getSetCookie()).toEqual([]);
    expect(await whoami(t.url, cookie)).toMatchObject({ UserID: 'already' });
  });

  it('follows returnUrl only when it is a local path', async () => {
    const unsafe = [
      '//evil.example',
      '/\\evil.example',
      '\\\\evil.example',
      'https://evil.example',
      'HTTPS://evil.example/x',
      'javascript:alert(1)',
      'evil.example',
      '%2F%2Fevil.example',
      '/%2F%2Fevil.example',
      '/%2f%2fevil.example',
      '/%5Cevil.example',
      '/%5cevil.example',
      '/%252F%252Fevil.example',
      '/\t/evil.example',
      '/%09/evil.example',
      '/\n/evil.example',
      '/%0d%0a/evil.example',
      ' //evil.example',
      '',
    ];
    for (const returnUrl of unsafe) {
      const res = await postJson(`${t.url}${DEV_SIGN_IN}?${new URLSearchParams({ returnUrl })}`, { UserID: 'r' });
      expect(res.status, returnUrl).toBe(302);
      expect(res.headers.get('location'), returnUrl).toBe('/');
    }
    const res = await fetch(`${t.url}${DEV_SIGN_IN}?${new URLSearchParams({ returnUrl: '//evil.example' })}`, {
      redirect: 'manual',
    });
    expect(res.headers.get('location')).toBe('/');
    const local = await postJson(
      `${t.url}${DEV_SIGN_IN}?${new URLSearchParams({ returnUrl: '/view/HDS/a.html?x=1#top' })}`,
      { UserID: 'r' },
    );
    expect(local.headers.get('location')).toBe('/view/HDS/a.html?x=1#top');
  });

  it('rejects an invalid account with 400 listing every bad field', async () => {
    const bad = await postJson(`${t.url}${DEV_SIGN_IN}`, {
      UserID: '',
      Roles: 'Admin',
      BirthDate: '2023-02-30',
      Gender: 'MM',
      Email: 5,
    });
    expect(bad.status).toBe(400);
    expect(bad.headers.get('content-type')).toMatch(/application\/problem\+json/);
    const problem = (await bad.json()) as { code: string; errors: Array<{ field: string }> };
    expect(problem.code).toBe('dev_sign_in.invalid_account');
    expect(problem.errors.map((e) => e.field).sort()).toEqual(['BirthDate', 'Email', 'Gender', 'Roles', 'UserID']);
    expect(bad.headers.getSetCookie()).toEqual([]);

    const cases: unknown[] = [
      {},
      { UserID: 42 },
      { UserID: '   ' },
      { UserID: 'a', Roles: [1] },
      { UserID: 'a', BirthDate: '2023-2-3' },
      { UserID: 'a', Gender: '1' },
      [],
      { UserID: 'a', BirthDate: '1999-13-01' },
      '{"UserID":',
      '"text"',
    ];
    for (const body of cases) {
      const res = await postJson(`${t.url}${DEV_SIGN_IN}`, typeof body === 'string' ? body : JSON.stringify(body));
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.headers.getSetCookie()).toEqual([]);
    }
  });

  it('answers 415 to a body that is not JSON', async () => {
    const forms = [
      { 'content-type': 'application/x-www-form-urlencoded', body: 'UserID=a' },
      { 'content-type': 'text/plain', body: '{"UserID":"a"}' },
      { 'content-type': 'multipart/form-data; boundary=x', body: '--x--' },
    ];
    for (const f of forms) {
      const res = await fetch(`${t.url}${DEV_SIGN_IN}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': f['content-type'] },
        body: f.body,
      });
      expect(res.status).toBe(415);
      expect(((await res.json()) as { code: string }).code).toBe('dev_sign_in.unsupported_media_type');
    }
    const none = await fetch(`${t.url}${DEV_SIGN_IN}`, { method: 'POST', redirect: 'manual' });
    expect(none.status).toBe(415);
  });

  it('a tampered authentication cookie, or one signed with another key, signs nobody in', async () => {
    const res = await postJson(`${t.url}${DEV_SIGN_IN}`, { UserID: 'victim', Roles: ['User'] });
    const auth = cookieValue(setCookies(res).get('tst.AuthenticationScheme')!);
    const [version, payload, mac] = auth.split('.') as [string, string, string];
    const forged = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    forged.user.UserID = 'root';
    forged.user.Roles = ['Root'];
    const forgedPayload = Buffer.from(JSON.stringify(forged)).toString('base64url');
    const flippedMac = (mac[0] === 'A' ? 'B' : 'A') + mac.slice(1);
    const tampered = [
      `${version}.${forgedPayload}.${mac}`,
      `${version}.${payload}.${flippedMac}`,
      `${version}.${payload}`,
      `v2.${payload}.${mac}`,
      `${version}.${payload}.${mac}x`,
      'garbage',
    ];
    for (const value of tampered) {
      expect(await whoami(t.url, `tst.AuthenticationScheme=${encodeURIComponent(value)}`), value).toBeNull();
    }
    expect(await whoami(t.url, `tst.AuthenticationScheme=${encodeURIComponent(auth)}`)).toMatchObject({
      UserID: 'victim',
    });

    // A cookie minted by another host (another signing key) is not accepted here.
    const other = await startSignInHost({
      appSettings: { Security: { SigningKey: 'another-hosts-signing-key-0123456789' } },
    });
    try {
      const foreign = await postJson(`${other.url}${DEV_SIGN_IN}`, { UserID: 'foreigner' });
      expect(await whoami(other.url, cookieHeader(foreign))).toMatchObject({ UserID: 'foreigner' });
      expect(await whoami(t.url, cookieHeader(foreign))).toBeNull();
      // ...and a foreign cookie is not "already signed in" either: the sign-in goes ahead.
      const again = await postJson(
        `${t.url}${DEV_SIGN_IN}`,
        { UserID: 'local' },
        { cookie: cookieHeader(foreign), accept: 'application/json' },
      );
      expect(again.status).toBe(200);
    } finally {
      await other.close();
    }
  });

  it('a hand-edited .Member cookie changes nothing the server believes', async () => {
    const res = await postJson(`${t.url}${DEV_SIGN_IN}`, { UserID: 'plain', Roles: ['User'] });
    const forgedMember = Buffer.from(
      JSON.stringify({ UserID: 'root', Roles: ['Root', 'Administrator'], ApplicationRoleID: 'Root' }),
    ).toString('base64');
    const cookies = cookieHeader(res)
      .split('; ')
      .map((c) => (c.startsWith('tst.Member=') ? `tst.Member=${encodeURIComponent(forgedMember)}` : c))
      .join('; ');
    expect(await whoami(t.url, cookies)).toMatchObject({ UserID: 'plain', Roles: ['User'] });
    // A Member cookie alone proves nothing.
    expect(await whoami(t.url, `tst.Member=${encodeURIComponent(forgedMember)}`)).toBeNull();
  });
});

describe('dev sign-in configuration', () => {
  it('GET with no configured UserID is a 400 naming the setting to fix', async () => {
    const t = await startSignInHost({ moduleConfig: { DevAutoSignIn: { ...DEV_ACCOUNT, UserID: '' } } });
    try {
      const res = await fetch(`${t.url}${DEV_SIGN_IN}`, { redirect: 'manual' });
      expect(res.status).toBe(400);
      const problem = (await res.json()) as { code: string; detail: string };
      expect(problem.code).toBe('dev_sign_in.no_configured_user');
      expect(problem.detail).toContain('ModuleConfig:DevAutoSignIn:UserID');
      expect(problem.detail).toContain('module.json');
      expect(res.headers.getSetCookie()).toEqual([]);
    } finally {
      await t.close();
    }
  });

  for (const userSignExpire of [-1, 0, 30]) {
    it(`sets the expiry for UserSignExpire ${userSignExpire}`, async () => {
      const t = await startSignInHost({
        appSettings: { UserSignExpire: userSignExpire },
        moduleConfig: { DevAutoSignIn: DEV_ACCOUNT },
      });
      try {
        const before = new Date();
        const res = await fetch(`${t.url}${DEV_SIGN_IN}`, { redirect: 'manual' });
        const after = new Date();
        const cookies = setCookies(res);
        const ticks = Number(cookieValue(cookies.get('tst.ExpireTicks')!));
        let low: number;
        let high: number;
        if (userSignExpire > 0) {
          low = before.getTime() + userSignExpire * 60_000;
          high = after.getTime() + userSignExpire * 60_000;
        } else if (userSignExpire === 0) {
          low = new Date(before).setDate(before.getDate() + 1);
          high = new Date(after).setDate(after.getDate() + 1);
        } else {
          // Hour |N| (local) of the next day.
          low = new Date(before.getFullYear(), before.getMonth(), before.getDate() + 1, -userSignExpire).getTime();
          high = new Date(after.getFullYear(), after.getMonth(), after.getDate() + 1, -userSignExpire).getTime();
        }
        expect(ticks).toBeGreaterThanOrEqual(low);
        expect(ticks).toBeLessThanOrEqual(high);
        for (const name of COOKIE_NAMES) {
          const expires = /; Expires=([^;]+)/i.exec(cookies.get(name)!)?.[1];
          expect(new Date(expires!).getTime(), name).toBe(Math.floor(ticks / 1000) * 1000);
        }
      } finally {
        await t.close();
      }
    });
  }
});

describe('dev sign-in log', () => {
  it('logs every sign-in with the user ID and client address, never a cookie value', async () => {
    const t = await startSignInHost({
      moduleConfig: { DevAutoSignIn: DEV_ACCOUNT },
      sections: {
        Serilog: {
          WriteTo: [
            {
              Name: 'File',
              Args: { path: '../log/app.log', buffered: false, outputTemplate: '{Message:lj}{NewLine}' },
            },
          ],
        },
      },
    });
    try {
      const get = await fetch(`${t.url}${DEV_SIGN_IN}`, { redirect: 'manual' });
      const post = await postJson(`${t.url}${DEV_SIGN_IN}`, { UserID: 'logged-poster' });
      const values = [...setCookies(get).values(), ...setCookies(post).values()].map(cookieValue);
      await t.host.close();
      const logDir = path.join(t.home.home, 'log');
      const text = fs
        .readdirSync(logDir)
        .map((f) => fs.readFileSync(path.join(logDir, f), 'utf8'))
        .join('\n');
      expect(text).toMatch(/signed in: user dev1 from 127\.0\.0\.1 \(dev sign-in GET\)/);
      expect(text).toMatch(/signed in: user logged-poster from 127\.0\.0\.1 \(dev sign-in POST\)/);
      for (const value of values.filter((v) => v.length > 12)) expect(text).not.toContain(value);
    } finally {
      await t.close();
    }
  });
});

describe('dev sign-out', () => {
  it('POST /sign-out clears the cookie set so that another account can sign in', async () => {
    const t = await startSignInHost();
    try {
      const first = await postJson(`${t.url}${DEV_SIGN_IN}`, { UserID: 'first' });
      const out = await fetch(`${t.url}${DEV_SIGN_OUT}?returnUrl=/bye`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie: cookieHeader(first) },
      });
      expect(out.status).toBe(302);
      expect(out.headers.get('location')).toBe('/bye');
      const cleared = setCookies(out);
      expect([...cleared.keys()].sort()).toEqual([...WITH_SESSION].sort());
      for (const c of cleared.values()) expect(c).toMatch(/Expires=Thu, 01 Jan 1970/);
      // A copy of the signed-out cookies, replayed, signs nobody in.
      expect(await whoami(t.url, cookieHeader(first))).toBeNull();
      expect((await fetch(`${t.url}${DEV_SIGN_OUT}`, { redirect: 'manual' })).status).toBe(404); // not GET
      const second = await postJson(`${t.url}${DEV_SIGN_IN}`, { UserID: 'second' }, { accept: 'application/json' });
      expect(second.status).toBe(200);
      expect(await whoami(t.url, cookieHeader(second))).toMatchObject({ UserID: 'second' });
    } finally {
      await t.close();
    }
  });
});

describe('dev sign-in behind a proxy and without sessions', () => {
  it('marks every cookie Secure when the client came over HTTPS (trusted proxy) and logs the forwarded address', async () => {
    const t = await startSignInHost({ appSettings: { UseForwardProxy: true, ForwardProxyIP: ['127.0.0.1'] } });
    try {
      const res = await postJson(
        `${t.url}${DEV_SIGN_IN}`,
        { UserID: 'tls' },
        { 'x-forwarded-for': '203.0.113.9', 'x-forwarded-proto': 'https' },
      );
      const cookies = setCookies(res);
      expect(cookies.size).toBe(7);
      for (const c of cookies.values()) expect(c).toMatch(/; Secure/i);
      const variable = JSON.parse(Buffer.from(cookieValue(cookies.get('tst.Variable')!), 'base64').toString('utf8'));
      expect(variable.ClientIP).toBe('203.0.113.9');
    } finally {
      await t.close();
    }
  });

  it('signs in with SessionState:IsSession false (sign-in does not depend on sessions)', async () => {
    const t = await startSignInHost({ appSettings: { SessionState: { IsSession: false } } });
    try {
      const res = await postJson(`${t.url}${DEV_SIGN_IN}`, { UserID: 'nosession' });
      expect(res.status).toBe(302);
      expect(await whoami(t.url, cookieHeader(res))).toMatchObject({ UserID: 'nosession' });
    } finally {
      await t.close();
    }
  });
});

// Sign-outs at scale (docs/dev-sign-in.md "Sign-out holds"): past 100,000 live sign-outs a
// signed-out cookie is still refused, after a restart and when another process on the home appends;
// a large sign-out file is read without holding the host; and the bound on sign-outs falls on new
// sign-ins (503), never on a sign-out.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AckModuleFactory } from '../modules/contract.js';
import { moduleFiles, testAppSettings, useTestHosts, type TestHome } from '../test-support/index.js';
import { signInRouter } from '../test-support/account-module.js';
import { hostProblems } from '../http/problem-codes.js';

const hosts = useTestHosts();
const accountModule: AckModuleFactory = (ctx) => {
  const router = signInRouter(ctx);
  router.get('/plain', (_req, res) => res.json({ ok: true }));
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

function accountHome(security: object = {}): TestHome {
  return hosts.home(
    testAppSettings({
      AppSettings: { LoadModules: ['account'], CookiePrefixName: 'app', UserSignExpire: 120, Security: security },
    }),
    moduleFiles(['account']),
  );
}
const signOutFile = (home: TestHome) => path.join(home.home, '.ack', 'sign-outs');

/** What another process on the home appends: `count` live sign-outs of other cookies. */
function appendOthers(home: TestHome, count: number, tag: string): void {
  const until = Date.now() + 3_600_000;
  const lines: string[] = [];
  for (let i = 0; i < count; i++) lines.push(`\n[${until},"${tag}-${i.toString(36).padStart(8, '0')}"]`);
  fs.mkdirSync(path.dirname(signOutFile(home)), { recursive: true });
  fs.appendFileSync(signOutFile(home), lines.join(''));
}

describe('sign-outs past 100,000', { timeout: 120_000 }, () => {
  it('a signed-out cookie stays refused after a restart, with 100,500 later sign-outs in the file', async () => {
    const home = accountHome();
    const first = await hosts.start(home, { account: accountModule });
    const gone = cookiesOf(await fetch(`${first.url}/account/api/in?user=leaver`));
    const kept = cookiesOf(await fetch(`${first.url}/account/api/in?user=stayer`));
    await fetch(`${first.url}/account/api/out`, { headers: { cookie: gone } });
    expect(await me(first.url, gone)).toBeNull();
    await first.close();
    appendOthers(home, 100_500, 'other');
    const second = await hosts.start(home, { account: accountModule });
    expect(await me(second.url, gone)).toBeNull();
    // Its neighbour, signed in at the same time and never signed out, still signs in.
    expect(await me(second.url, kept)).toMatchObject({ UserID: 'stayer' });
  });

  it('a signed-out cookie stays refused when another process on the home appends 100,500 sign-outs', async () => {
    const home = accountHome();
    const t = await hosts.start(home, { account: accountModule });
    const gone = cookiesOf(await fetch(`${t.url}/account/api/in?user=leaver`));
    const kept = cookiesOf(await fetch(`${t.url}/account/api/in?user=stayer`));
    await fetch(`${t.url}/account/api/out`, { headers: { cookie: gone } });
    appendOthers(home, 100_500, 'other');
    // A cookie this process does not know as signed out makes it read what the other appended.
    expect(await me(t.url, kept)).toMatchObject({ UserID: 'stayer' });
    expect(await me(t.url, gone)).toBeNull();
    appendOthers(home, 10, 'more');
    expect(await me(t.url, kept)).toMatchObject({ UserID: 'stayer' });
    expect(await me(t.url, gone)).toBeNull();
  });

  it('answers other requests while it reads 300,000 sign-outs another process appended, then refuses the cookie', async () => {
    const home = accountHome();
    const t = await hosts.start(home, { account: accountModule });
    const gone = cookiesOf(await fetch(`${t.url}/account/api/in?user=leaver`));
    const kept = cookiesOf(await fetch(`${t.url}/account/api/in?user=stayer`));
    // Signed out by another process: the id is in the file only, behind 300,000 other records.
    const tid = decodeURIComponent(/app\.TokenID=([^;]+)/.exec(gone)![1]!)
      .split('|')
      .pop()!;
    appendOthers(home, 300_000, 'other');
    fs.appendFileSync(signOutFile(home), `\n[${Date.now() + 3_600_000},"${tid}"]`);
    let settled = false;
    const read = me(t.url, gone).finally(() => {
      settled = true;
    });
    // Requests without a cookie go on being answered while the file is read.
    let answered = 0;
    for (let i = 0; i < 10_000 && !settled; i++) {
      const res = await fetch(`${t.url}/account/api/plain`);
      expect(res.status).toBe(200);
      await res.body?.cancel();
      if (!settled) answered++;
    }
    expect(await read).toBeNull();
    expect(answered).toBeGreaterThan(2);
    expect(await me(t.url, kept)).toMatchObject({ UserID: 'stayer' });
  });
});

describe('the bound on sign-outs (Security:MaxLiveSignOuts)', () => {
  it('refuses a new sign-in (503) once the host keeps that many live sign-outs, and forgets none of them', async () => {
    const home = accountHome({ MaxLiveSignOuts: 3 });
    const t = await hosts.start(home, { account: accountModule });
    const cookies: string[] = [];
    for (const user of ['a', 'b', 'c']) cookies.push(cookiesOf(await fetch(`${t.url}/account/api/in?user=${user}`)));
    for (const cookie of cookies.slice(0, 2)) await fetch(`${t.url}/account/api/out`, { headers: { cookie } });
    // Two of three: a sign-in still passes.
    const fourth = await fetch(`${t.url}/account/api/in?user=d`);
    expect(fourth.status).toBe(200);
    await fetch(`${t.url}/account/api/out`, { headers: { cookie: cookies[2]! } });
    // Three of three: refused, and every sign-out still holds.
    const refused = await fetch(`${t.url}/account/api/in?user=e`);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(((await refused.json()) as { code: string }).code).toBe(hostProblems.SIGN_IN_SIGN_OUTS_FULL.code);
    expect(refused.headers.getSetCookie()).toEqual([]);
    for (const cookie of cookies) expect(await me(t.url, cookie)).toBeNull();
    expect(await me(t.url, cookiesOf(fourth))).toMatchObject({ UserID: 'd' });
  });
});

import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { TestHome, TestHost } from '@ack/host/test-support';
import {
  cookieHeader,
  createSignInHome,
  DEV_SIGN_IN,
  DEV_SIGN_OUT,
  postJson,
  startOnSignInHome,
  whoami,
} from '../test-support/sign-in-fixture.js';

// A sign-out outlives the process that took it (docs/dev-sign-in.md "Sign-out holds"): with the
// Memory session store, a restart, `ack reload` or a replaced worker starts with an empty memory,
// and the signed-out cookie must still be refused.
const homes: TestHome[] = [];
const running: TestHost[] = [];
afterEach(async () => {
  for (const t of running.splice(0)) await t.close();
  for (const h of homes.splice(0)) h.remove();
});

function signInHome(): TestHome {
  const home = createSignInHome();
  homes.push(home);
  return home;
}

async function start(home: TestHome): Promise<TestHost> {
  const t = await startOnSignInHome(home);
  running.push(t);
  return t;
}

async function stop(t: TestHost): Promise<void> {
  running.splice(running.indexOf(t), 1);
  await t.close();
}

async function signIn(t: TestHost, userId: string): Promise<string> {
  const res = await postJson(`${t.url}${DEV_SIGN_IN}`, { UserID: userId }, { accept: 'application/json' });
  expect(res.status).toBe(200);
  const cookie = cookieHeader(res);
  expect(await whoami(t.url, cookie)).toMatchObject({ UserID: userId });
  return cookie;
}

async function signOut(t: TestHost, cookie: string): Promise<void> {
  const res = await fetch(`${t.url}${DEV_SIGN_OUT}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie, accept: 'application/json' },
  });
  expect(res.status).toBe(204);
}

const signOutsFile = (home: TestHome) => path.join(home.home, '.ack', 'sign-outs');
/** The file's records; a compacted file's first line names the file and is not one. */
const records = (home: TestHome) =>
  fs
    .readFileSync(signOutsFile(home), 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as unknown)
    .filter((r): r is [number, string] => Array.isArray(r));

describe('sign-out across restarts (Memory session store)', () => {
  it('a cookie signed out before a restart is refused after it; one that was not signed out still works', async () => {
    const home = signInHome();
    const first = await start(home);
    const gone = await signIn(first, 'leaver');
    const kept = await signIn(first, 'stayer');
    await signOut(first, gone);
    expect(await whoami(first.url, gone)).toBeNull();
    await stop(first);

    const second = await start(home);
    // The copy taken before sign-out, replayed against the new process.
    expect(await whoami(second.url, gone)).toBeNull();
    expect(await whoami(second.url, kept)).toMatchObject({ UserID: 'stayer' });
    await stop(second);

    // And again: the record is still there for a third process.
    const third = await start(home);
    expect(await whoami(third.url, gone)).toBeNull();
    expect(await whoami(third.url, kept)).toMatchObject({ UserID: 'stayer' });
  });

  it('a sign-out in one process is refused by another already running on the same home', async () => {
    const home = signInHome();
    const a = await start(home);
    const b = await start(home);
    const cookie = await signIn(a, 'both');
    // Known to b before the sign-out, so b has read the file already: it must read it again.
    expect(await whoami(b.url, cookie)).toMatchObject({ UserID: 'both' });
    await signOut(a, cookie);
    expect(await whoami(b.url, cookie)).toBeNull();
  });

  it('drops expired records from the file instead of growing it forever, keeping the live ones', async () => {
    const home = signInHome();
    const now = Date.now();
    const expired = Array.from({ length: 400 }, (_, i) => [now - 1000 - i, `expired${i}`] as [number, string]);
    const live: [number, string] = [now + 3_600_000, 'still-live'];
    // A torn record (a crash mid-write) among them is skipped, not fatal.
    fs.mkdirSync(path.dirname(signOutsFile(home)), { recursive: true });
    fs.writeFileSync(
      signOutsFile(home),
      [...expired, live].map((r) => `\n${JSON.stringify(r)}`).join('') + '\n[17000000000',
    );
    const t = await start(home);
    const cookie = await signIn(t, 'compacted');
    await signOut(t, cookie);
    const after = records(home);
    expect(after.some(([, id]) => id.startsWith('expired'))).toBe(false);
    expect(after).toContainEqual(live);
    expect(after).toHaveLength(2); // the live one and the new sign-out
    expect(fs.statSync(signOutsFile(home)).mode & 0o777).toBe(0o600);
    await stop(t);
    const restarted = await start(home);
    expect(await whoami(restarted.url, cookie)).toBeNull();
  });
});

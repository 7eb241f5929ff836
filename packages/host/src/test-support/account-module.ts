import type { AckModuleFactory } from '../modules/contract.js';
import { createTestHome, moduleFiles, startTestHost, testAppSettings, type TestHost } from './index.js';

type ModuleContext = Parameters<AckModuleFactory>[0];

/**
 * The routes of a test module that signs in through the host's service, as a sign-in module
 * would: `/in?user=` signs in (with `UserName` from `&name=` when `userName` is set), `/out` signs
 * out, `/me` says who is signed in. A test adds its own routes to the router returned.
 */
export function signInRouter(ctx: ModuleContext, options: { userName?: boolean } = {}) {
  const router = ctx.host.createRouter();
  router.get('/in', async (req, res) => {
    await ctx.host.signIn.issue(req, res, {
      UserID: String(req.query.user),
      Roles: ['User'],
      ...(options.userName ? { UserName: String(req.query.name ?? '') } : {}),
    });
    res.json({ ok: true });
  });
  router.get('/out', async (req, res) => {
    await ctx.host.signIn.clear(req, res);
    res.json({ ok: true });
  });
  router.get('/me', (req, res) => res.json({ user: req.ackUser ?? null }));
  return router;
}

/**
 * Runs `body` with two hosts of the `account` module on the same settings (one signing key, one
 * session store, as behind a load balancer), stopped and removed afterwards whatever happens.
 */
export async function withTwoAccountHosts(
  settings: object,
  account: AckModuleFactory,
  body: (a: TestHost, b: TestHost) => Promise<void>,
): Promise<void> {
  const started: TestHost[] = [];
  try {
    for (let i = 0; i < 2; i++)
      started.push(await startTestHost(createTestHome(settings, moduleFiles(['account'])), { account }));
    await body(started[0]!, started[1]!);
  } finally {
    for (const t of started) {
      await t.close();
      t.home.remove();
    }
  }
}

/**
 * Settings of hosts behind a load balancer: the `account` module, cookies prefixed `app`, two-hour
 * sign-ins, and the same signing key and session store on every host (docs/scale-out.md).
 */
export function sharedSignInSettings(signingKey: string, sessionState: object): object {
  return testAppSettings({
    AppSettings: {
      LoadModules: ['account'],
      CookiePrefixName: 'app',
      UserSignExpire: 120,
      Security: { SigningKey: signingKey },
      SessionState: sessionState,
    },
  });
}

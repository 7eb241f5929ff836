import type { AckModuleFactory } from '@ack/host';
import { createTestHome, startTestHost, testAppSettings, type TestHome, type TestHost } from '@ack/host/test-support';
import { wwwrootModule } from '../index.js';

/**
 * Test support for the sign-in tests and the tests that need a signed-in user (helper APIs, htmx,
 * HTTP/2): a temp home with the wwwroot module and a `whoami` module whose `GET /whoami/api` echoes
 * what the server believes (`req.ackUser`), the sign-in routes, and cookie helpers.
 */
export const DEV_SIGN_IN = '/wwwroot/api/dev-account/sign-in';
export const DEV_SIGN_OUT = '/wwwroot/api/dev-account/sign-out';

export const whoamiModule: AckModuleFactory = (ctx) => {
  const router = ctx.host.createRouter();
  router.get('/', (req, res) => res.json({ user: req.ackUser ?? null }));
  return { routes: [{ mount: '/whoami/api', handler: router }] };
};

export interface FixtureOptions {
  appSettings?: Record<string, unknown>;
  moduleConfig?: Record<string, unknown>;
  /** Other appsettings sections (e.g. `Serilog`). */
  sections?: Record<string, unknown>;
}

export const DEV_APP_SETTINGS = { IsEnabledDevAutoSignIn: true, RunningEnvironment: 'D', CookiePrefixName: 'tst' };

/** The home alone, for a test that starts several hosts on it (a restart, two processes). */
export function createSignInHome(options: FixtureOptions = {}): TestHome {
  return createTestHome(
    testAppSettings({
      AppSettings: { LoadModules: ['wwwroot', 'whoami'], ...DEV_APP_SETTINGS, ...options.appSettings },
      ...options.sections,
    }),
    {
      'modules/wwwroot/module.json': { ModuleID: 'wwwroot', ModuleConfig: { ...options.moduleConfig } },
      'modules/whoami/module.json': { ModuleID: 'whoami' },
    },
  );
}

/** A host on a sign-in home; the caller closes it. */
export function startOnSignInHome(home: TestHome): Promise<TestHost> {
  return startTestHost(home, { wwwroot: wwwrootModule, whoami: whoamiModule });
}

/** A host on a fresh sign-in home; closing it removes the home. */
export async function startSignInHost(options: FixtureOptions = {}): Promise<TestHost> {
  const home = createSignInHome(options);
  const host = await startOnSignInHome(home);
  return {
    ...host,
    close: async () => {
      await host.close();
      home.remove();
    },
  };
}

/** `name=value` pairs of a response's Set-Cookie headers, as a Cookie request header would send them. */
export function cookieHeader(res: Response): string {
  return res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
}

/** Set-Cookie headers by cookie name. */
export function setCookies(res: Response): Map<string, string> {
  return new Map(res.headers.getSetCookie().map((c) => [c.slice(0, c.indexOf('=')), c]));
}

export function cookieValue(setCookie: string): string {
  const pair = setCookie.split(';')[0]!;
  return decodeURIComponent(pair.slice(pair.indexOf('=') + 1));
}

export async function whoami(url: string, cookie: string): Promise<unknown> {
  const res = await fetch(`${url}/whoami/api`, { headers: { cookie } });
  return ((await res.json()) as { user: unknown }).user;
}

/** A JSON POST as a script sends it (no redirect followed); a string body is sent as it is. */
export function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

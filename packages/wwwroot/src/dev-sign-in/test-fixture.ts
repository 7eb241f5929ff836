import type { AckModuleFactory } from '@ack/host';
import { createTestHome, startTestHost, testAppSettings, type TestHost } from '@ack/host/test-support';
import { wwwrootModule } from '../index.js';

/**
 * Test support for the sign-in and helper API tests: a temp home with the wwwroot module and a
 * `whoami` module whose `GET /whoami/api` echoes what the server believes (`req.ackUser`).
 */
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

export async function startSignInHost(options: FixtureOptions = {}): Promise<TestHost> {
  const home = createTestHome(
    testAppSettings({
      AppSettings: { LoadModules: ['wwwroot', 'whoami'], ...DEV_APP_SETTINGS, ...options.appSettings },
      ...options.sections,
    }),
    {
      'modules/wwwroot/module.json': { ModuleID: 'wwwroot', ModuleConfig: { ...options.moduleConfig } },
      'modules/whoami/module.json': { ModuleID: 'whoami' },
    },
  );
  const host = await startTestHost(home, { wwwroot: wwwrootModule, whoami: whoamiModule });
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

import type { AckModuleFactory, Problem } from '../index.js';
import { ProblemError, sendProblem } from '../index.js';
import { describe, expect, it } from 'vitest';
import { moduleFiles, testAppSettings, useTestHosts } from '../test-support/index.js';

const hosts = useTestHosts();

/** A module whose routes and raw handlers throw the problems a careless module might build. */
const careless: Record<string, () => Problem> = {
  'status-99': () => ({ status: 99, code: 'x' }),
  'status-200': () => ({ status: 200, code: 'x' }),
  'status-1000': () => ({ status: 1000, code: 'x' }),
  'status-text': () => ({ status: 'teapot' as unknown as number, code: 'x' }),
  'status-fraction': () => ({ status: 404.5, code: 'x' }),
  'no-code': () => ({ status: 400 }) as Problem,
  'header-newline': () => ({ status: 400, code: 'x', headers: { 'X-Bad': 'a\r\nSet-Cookie: evil=1' } }),
  'header-name': () => ({ status: 400, code: 'x', headers: { 'Bad Name': 'v' } }),
  'bigint-extension': () => ({ status: 400, code: 'x', extensions: { n: 10n } }),
};

const carelessModule: AckModuleFactory = (ctx) => {
  const router = ctx.host.createRouter();
  router.get('/:kind', (req) => {
    throw new ProblemError(careless[String(req.params.kind)]!());
  });
  return {
    routes: [{ mount: '/careless/api', handler: router }],
    public: [
      (req, res, next) => {
        const m = /^\/careless-raw\/(.+)$/.exec(req.ack.rawPath);
        if (!m) return next();
        // Raw handlers may also call sendProblem directly.
        sendProblem(res, careless[m[1]!]!());
      },
    ],
  };
};

describe('a module error that is itself malformed', () => {
  it.each(Object.keys(careless))(
    '%s becomes a 500 problem body, never a hang or a dropped connection',
    async (kind) => {
      const home = hosts.home(
        testAppSettings({ AppSettings: { LoadModules: ['careless'] } }),
        moduleFiles(['careless']),
      );
      const { url } = await hosts.start(home, { careless: carelessModule });
      for (const path of [`/careless/api/${kind}`, `/careless-raw/${kind}`]) {
        const res = await fetch(url + path, { signal: AbortSignal.timeout(10_000) });
        expect(res.status, path).toBe(500);
        expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        expect(res.headers.get('x-bad')).toBeNull();
        expect(res.headers.get('set-cookie') ?? '').not.toContain('evil');
        const body = (await res.json()) as Record<string, unknown>;
        expect(body).toMatchObject({ status: 500, code: 'internal_error' });
      }
    },
  );

  it('keeps a well-formed problem as it is', async () => {
    const home = hosts.home(testAppSettings({ AppSettings: { LoadModules: ['careless'] } }), moduleFiles(['careless']));
    const good: AckModuleFactory = (ctx) => {
      const router = ctx.host.createRouter();
      router.get('/', () => {
        throw new ProblemError({
          status: 409,
          code: 'careless.conflict',
          detail: 'busy',
          headers: { 'Retry-After': '5' },
          extensions: { item: 7 },
        });
      });
      return { routes: [{ mount: '/careless/api', handler: router }] };
    };
    const { url } = await hosts.start(home, { careless: good });
    const res = await fetch(`${url}/careless/api`);
    expect(res.status).toBe(409);
    expect(res.headers.get('retry-after')).toBe('5');
    expect(await res.json()).toEqual({
      type: 'about:blank',
      title: 'Conflict',
      status: 409,
      detail: 'busy',
      code: 'careless.conflict',
      item: 7,
    });
  });
});

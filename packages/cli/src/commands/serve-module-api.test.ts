import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { useTestHosts } from '@ack/host/test-support';
import { startAckServe } from '../test-support/spawn-ack.js';

// A module that `ack serve` loads from its EntryPoint imports `@ack/host` itself, as docs/api.md
// shows; that is the library's own copy, not the one bundled into the command. What it throws must
// still be answered as its problem (docs/architecture.md "What loads only when used").
const hosts = useTestHosts();
const hostLibrary = pathToFileURL(
  path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../host/dist/index.js'),
).href;

const ordersModule = {
  'modules/orders/module.json': { ModuleID: 'orders', EntryPoint: './index.mjs' },
  'modules/orders/index.mjs': `import { ProblemError } from ${JSON.stringify(hostLibrary)};
export default (ctx) => {
  const router = ctx.host.createRouter();
  router.get('/locked', () => {
    throw new ProblemError({ status: 409, code: 'orders.locked', detail: 'Order 42 is being edited.' });
  });
  router.get('/broken', () => {
    const err = new Error('not a problem');
    err.name = 'ProblemError';
    throw err;
  });
  return { routes: [{ mount: '/orders/api', handler: router }] };
};`,
};

describe("ack serve and a module's own @ack/host", () => {
  it("answers a ProblemError from the module's copy of @ack/host as that problem, and any other error as a 500", async () => {
    const home = hosts.home({ AppSettings: { LoadModules: ['orders'] } }, ordersModule);
    const served = await startAckServe(['--app-dir', home.appDir, '--port', '0', '--host', '127.0.0.1']);
    try {
      const locked = await fetch(`${served.url}/orders/api/locked`);
      expect(locked.status, served.output()).toBe(409);
      expect(locked.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(await locked.json()).toMatchObject({
        status: 409,
        code: 'orders.locked',
        detail: 'Order 42 is being edited.',
      });
      // Only the mark counts, not the name: an ordinary error called ProblemError is still a 500.
      const broken = await fetch(`${served.url}/orders/api/broken`);
      expect(broken.status).toBe(500);
    } finally {
      served.child.kill('SIGTERM');
      await served.exited;
    }
  }, 30_000);
});

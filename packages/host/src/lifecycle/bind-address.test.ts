import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createHost, type AckHost } from '../host.js';
import { createTestHome, testAppSettings, type TestHome } from '../test-support/index.js';

// createHost(...).listen() binds what `ack serve` binds: AppSettings:ServerListenAddress, this
// machine only by default, and reports the address it bound (docs/configuration.md).
const opened: Array<{ host: AckHost; home: TestHome }> = [];
afterEach(async () => {
  for (const { host, home } of opened.splice(0)) {
    await host.close({ graceMs: 0 });
    home.remove();
  }
});

async function listen(appSettings: Record<string, unknown>, host?: string) {
  const home = createTestHome(testAppSettings({ AppSettings: appSettings }));
  const ack = await createHost({ appDir: home.appDir, modules: {}, env: {}, logging: { quiet: true } });
  opened.push({ host: ack, home });
  const url = await ack.listen(host === undefined ? { port: 0 } : { port: 0, host });
  return { url, address: (ack.server.address() as AddressInfo).address };
}

describe('the address a host binds', () => {
  it('is loopback when nothing says otherwise, and the reported URL is that address', async () => {
    const { url, address } = await listen({});
    expect(address).toBe('127.0.0.1');
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await fetch(url)).status).toBe(404);
  });

  it('is every interface for ServerListenAddress "*" (its neighbour), reported as a URL that works here', async () => {
    const { url, address } = await listen({ ServerListenAddress: '*' });
    expect(['::', '0.0.0.0']).toContain(address);
    expect((await fetch(url)).status).toBe(404);
  });

  it('is what listen() is asked for, before the setting', async () => {
    const { address } = await listen({ ServerListenAddress: '*' }, '127.0.0.1');
    expect(address).toBe('127.0.0.1');
  });
});

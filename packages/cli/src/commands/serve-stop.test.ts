import { describe, expect, it } from 'vitest';
import { useTestHosts } from '@ack/host/test-support';
import { startAckServe } from '../test-support/spawn-ack.js';

const hosts = useTestHosts();

describe('ack serve stopping', () => {
  it('exits (1, with a line saying why) when a module never finishes closing, instead of running on', async () => {
    const home = hosts.home(
      { AppSettings: { LoadModules: ['stuck'] }, Serilog: { WriteTo: [{ Name: 'Console', Args: {} }] } },
      {
        'modules/stuck/module.json': { ModuleID: 'stuck', EntryPoint: './index.mjs' },
        'modules/stuck/index.mjs': `export default () => ({ routes: [], close: () => new Promise(() => setInterval(() => {}, 1000)) });`,
      },
    );
    const served = await startAckServe(['--app-dir', home.appDir, '--port', '0', '--host', '127.0.0.1']);
    served.child.kill('SIGTERM');
    expect(await served.exited, served.output()).toBe(1);
    // 15 s, plus the readiness stop delay (AppSettings:Health:StopDelaySeconds, 2 s by default).
    expect(served.output()).toMatch(/the stop did not finish within 17 s/);
  }, 30_000);
});

import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTestHosts } from '@ack/host/test-support';
import { runAck, startAckServe } from '../test-support/spawn-ack.js';

// What `ack serve` says when a first-time user is about to be surprised (docs/configuration.md).
const hosts = useTestHosts();
const consoleOnly = { WriteTo: [{ Name: 'Console', Args: {} }] };

describe('ack serve hints', () => {
  it('names the app/ folder when --app-dir is the home itself', async () => {
    const home = hosts.home({ AppSettings: { LoadModules: [] } });
    const run = await runAck(['serve', '--app-dir', home.home, '--port', '0']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      `looks like an application home: its settings are in ${home.appDir} (--app-dir ${home.appDir})`,
    );
    // The neighbour: a folder that is no home at all gets the plain message.
    const elsewhere = await runAck(['serve', '--app-dir', path.join(home.home, 'modules'), '--port', '0']);
    expect(elsewhere.code).toBe(2);
    expect(elsewhere.stderr).toContain('appsettings.json: file not found');
    expect(elsewhere.stderr).not.toContain('looks like an application home');
  });

  it('warns that IsConfigurationWatching does nothing in a single process, and only when it is on', async () => {
    for (const watching of [true, false]) {
      const home = hosts.home({
        AppSettings: { LoadModules: [], IsConfigurationWatching: watching },
        Serilog: consoleOnly,
      });
      const served = await startAckServe(['--app-dir', home.appDir, '--port', '0', '--host', '127.0.0.1']);
      served.child.kill('SIGTERM');
      await served.exited;
      expect(/IsConfigurationWatching is on, but a single ack serve/.test(served.output()), String(watching)).toBe(
        watching,
      );
    }
  });

  it('warns that --workers with the Memory store keeps sessions per worker, and not without sessions', async () => {
    for (const isSession of [true, false]) {
      const home = hosts.home({
        AppSettings: { LoadModules: [], SessionState: { IsSession: isSession, CacheType: 'Memory' } },
        Serilog: consoleOnly,
      });
      const served = await startAckServe([
        '--app-dir',
        home.appDir,
        '--port',
        '0',
        '--host',
        '127.0.0.1',
        '--workers',
        '2',
      ]);
      // Stopped as soon as one worker listens: the other, still starting, must end at once too,
      // not be killed after outstaying the whole grace time (which the primary says).
      served.child.kill('SIGTERM');
      await served.exited;
      expect(served.output()).toContain('stopping the workers');
      expect(served.output()).not.toContain('outstayed its grace time');
      expect(
        /CacheType is Memory: each of the 2 workers keeps its own sessions/.test(served.output()),
        String(isSession),
      ).toBe(isSession);
    }
  }, 40_000);
});

import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { useTestHosts } from '@ack/host/test-support';
import { runAck } from '../test-support/spawn-ack.js';

const hosts = useTestHosts();

function home(appSettings: object, files: Record<string, string | object> = {}) {
  return hosts.home(appSettings, {
    'modules/wwwroot/module.json': {
      ModuleID: 'wwwroot',
      ModuleConfig: { SharedFileConfigPath: '../config/shared_files.json' },
    },
    'modules/wwwroot/wwwroot/index.html': '<h1>home</h1>',
    'config/shared_files.json': { items: [{ requestPath: '/theme.css', hostFilePath: '../shared/theme.css' }] },
    'shared/theme.css': 'body{}',
    ...files,
  });
}

describe('ack check', () => {
  it('passes the shipped example home with no warning: a first run shows none the user did not cause', async () => {
    const appDir = fileURLToPath(new URL('../../../../examples/basic/app', import.meta.url));
    const run = await runAck(['check', '--app-dir', appDir]);
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe(`${appDir}/appsettings.json: ok\n`);
    expect(run.code).toBe(0);
  });

  it('exits 0 on a home the host starts cleanly, and prints ok', async () => {
    const h = home({ AppSettings: { LoadModules: ['wwwroot'] } });
    const run = await runAck(['check', '--app-dir', h.appDir]);
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe(`${h.appDir}/appsettings.json: ok\n`);
    expect(run.code).toBe(0);
  });

  it('exits 0 with warnings for typos, naming file, line and the closest key', async () => {
    const h = home({ AppSettings: { LoadModules: ['wwwroot', 'ghost'], RunEnvironment: 'P' } });
    const run = await runAck(['check', '--app-dir', h.appDir, '--json']);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report).toMatchObject({ ok: true, errors: [] });
    expect(report.warnings).toEqual([
      `${h.appDir}/appsettings.json:7:23: unknown key "AppSettings:RunEnvironment" (ignored); did you mean \`RunningEnvironment\`?`,
      expect.stringMatching(/^module ghost will be skipped: no folder .*modules\/ghost$/),
    ]);
  });

  it('exits 2 on settings the host refuses, with every problem on its own line', async () => {
    const h = home({ AppSettings: { LoadModules: ['wwwroot'], ServerPort: 'eighty', RunningEnvironment: 'X' } });
    const run = await runAck(['check', '--app-dir', h.appDir]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^error: .*appsettings\.json:\d+:\d+: AppSettings:ServerPort: expected an integer/m);
    expect(run.stderr).toMatch(
      /^error: .*appsettings\.json:\d+:\d+: AppSettings:RunningEnvironment: expected one of D, S, P, T, L, got "X"$/m,
    );
    expect(run.stderr).toMatch(/check failed: 2 error\(s\)/);
  });

  it('exits 2 on a module.json that is not JSON and on a catalog entry that publishes a secret', async () => {
    const h = home(
      { AppSettings: { LoadModules: ['wwwroot', 'broken'] } },
      {
        'modules/broken/module.json': '{ "ModuleID": "broken", }}',
        'config/shared_files.json': { items: [{ requestPath: '/settings', hostFilePath: 'appsettings.json' }] },
      },
    );
    const run = await runAck(['check', '--app-dir', h.appDir, '--json']);
    expect(run.code).toBe(2);
    const report = JSON.parse(run.stdout);
    expect(report.ok).toBe(false);
    expect(report.errors).toEqual([
      expect.stringMatching(
        /shared_files\.json:\d+:\d+: items\[0\]: refused to publish \/settings -> .*app\/appsettings\.json: it is the host's settings file/,
      ),
      expect.stringMatching(/^not valid module settings: .*modules\/broken\/module\.json:1:\d+: not valid JSON/),
    ]);
  });

  it('exits 2 when there is no appsettings.json', async () => {
    const h = hosts.home({});
    const run = await runAck(['check', '--app-dir', `${h.home}/nowhere`, '--json']);
    expect(run.code).toBe(2);
    expect(JSON.parse(run.stdout)).toMatchObject({
      ok: false,
      errors: [expect.stringMatching(/appsettings\.json: file not found$/)],
    });
  });

  it('warns when no module would load and the static root is missing', async () => {
    const h = hosts.home(
      { AppSettings: { LoadModules: ['wwwroot'] } },
      { 'modules/wwwroot/module.json': { ModuleConfig: { WWWRootBasePath: '../missing' } } },
    );
    const run = await runAck(['check', '--app-dir', h.appDir, '--json']);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).warnings).toEqual([expect.stringMatching(/^static root .*\/missing does not exist/)]);
    const none = hosts.home({ AppSettings: { LoadModules: [] } });
    expect(JSON.parse((await runAck(['check', '--app-dir', none.appDir, '--json'])).stdout).warnings).toEqual([
      'no module will load: every request would be answered 404',
    ]);
  });

  it('refuses the session store names ack serve refuses, with the same words, and passes a name serve takes', async () => {
    const settings = (table: string) => ({
      AppSettings: {
        LoadModules: [],
        SessionState: {
          CacheType: 'MySql',
          // Nothing listens there: start-up stops after a second for the database, not for the settings.
          MySqlConnectionString: 'Server=127.0.0.1;Port=1;Uid=ack;Pwd=never-shown-31;',
          StoreStartupWaitSeconds: 1,
          MySqlTableName: table,
        },
      },
      Serilog: { WriteTo: [] },
    });
    const serve = (appDir: string) =>
      runAck(['serve', '--app-dir', appDir, '--port', '0', '--host', '127.0.0.1'], { timeoutMs: 30_000 });
    const named = /AppSettings:SessionState:MySqlTableName/;
    for (const table of ['   ', 'Session.Data']) {
      const h = hosts.home(settings(table));
      const check = await runAck(['check', '--app-dir', h.appDir]);
      expect(check.code, table).toBe(2);
      const refusal = /^error: (.*AppSettings:SessionState:MySqlTableName.*)$/m.exec(check.stderr)?.[1];
      expect(refusal, check.stderr).toBeDefined();
      const started = await serve(h.appDir);
      expect(started.code, table).toBe(2);
      expect(started.stderr).toContain(refusal);
      expect(check.stderr + started.stderr).not.toContain('never-shown-31');
    }
    const h = hosts.home(settings('SessionData'));
    const check = await runAck(['check', '--app-dir', h.appDir]);
    expect(check.code).toBe(0);
    expect(check.stderr).toBe('');
    const started = await serve(h.appDir);
    expect(started.code).toBe(1);
    expect(started.stderr).toMatch(/session store MySql at 127\.0\.0\.1:1 is not reachable after 1 s/);
    expect(started.stderr).not.toMatch(named);
  });
});

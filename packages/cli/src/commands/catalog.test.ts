import { describe, expect, it } from 'vitest';
import { useTestHosts } from '@ack/host/test-support';
import { runAck } from '../test-support/spawn-ack.js';

const hosts = useTestHosts();

function home(items: unknown[]) {
  return hosts.home(
    { AppSettings: { LoadModules: ['wwwroot'] } },
    {
      'modules/wwwroot/module.json': {
        ModuleID: 'wwwroot',
        ModuleConfig: { SharedFileConfigPath: '../config/shared_files.json' },
      },
      'config/shared_files.json': { items },
      'shared/theme.css': 'body{}',
    },
  );
}

describe('ack catalog check', () => {
  it('passes a catalog the host loads whole (exit 0)', async () => {
    const h = home([{ requestPath: '/theme.css', hostFilePath: '../shared/theme.css' }]);
    const run = await runAck(['catalog', 'check', '--app-dir', h.appDir]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/1 item\(s\) load\nok\n$/);
  });

  it('reports skipped items, missing targets and targets that must not be public (exit 2)', async () => {
    const h = home([
      { requestPath: '/theme.css', hostFilePath: '../shared/theme.css' },
      { requestPath: '/THEME.css', hostFilePath: '../shared/other.css' },
      { requestPath: '', hostFilePath: '../shared/theme.css' },
      { requestPath: '/gone.js', hostFilePath: '../shared/gone.js' },
      { requestPath: '/settings.json', hostFilePath: 'appsettings.json' },
    ]);
    const run = await runAck(['catalog', 'check', '--app-dir', h.appDir, '--json']);
    expect(run.code).toBe(2);
    const report = JSON.parse(run.stdout);
    expect(report.ok).toBe(false);
    // The secret target is refused, not loaded (the host would not start with it): two items load.
    expect(report.items).toBe(2);
    expect(report.skipped).toHaveLength(2);
    expect(report.skipped.join('\n')).toMatch(/items\[1\].*repeats an earlier item/);
    expect(report.missingTargets).toEqual([expect.stringMatching(/^\/gone\.js → .*shared\/gone\.js$/)]);
    expect(report.sensitiveTargets).toEqual([
      expect.stringMatching(/^\/settings\.json → .*app\/appsettings\.json \(it is the host's settings file\)$/),
    ]);
  });

  it('says in one line when there is no catalog to check (exit 2)', async () => {
    const h = hosts.home(
      { AppSettings: { LoadModules: ['wwwroot'] } },
      {
        'modules/wwwroot/module.json': {
          ModuleID: 'wwwroot',
          ModuleConfig: { SharedFileConfigPath: '../config/none.json' },
        },
      },
    );
    const run = await runAck(['catalog', 'check', '--app-dir', h.appDir]);
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(/none\.json does not exist/);
  });
});

describe('ack catalog check reads module.json as the host does', () => {
  it('accepts comments and trailing commas in module.json', async () => {
    const h = hosts.home(
      { AppSettings: { LoadModules: ['wwwroot'] } },
      {
        'modules/wwwroot/module.json':
          '{\n  // the catalog\n  "ModuleID": "wwwroot",\n  "ModuleConfig": { "SharedFileConfigPath": "../config/shared_files.json", },\n}\n',
        'config/shared_files.json': { items: [{ requestPath: '/theme.css', hostFilePath: '../shared/theme.css' }] },
        'shared/theme.css': 'body{}',
      },
    );
    const run = await runAck(['catalog', 'check', '--app-dir', h.appDir]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/1 item\(s\) load\nok\n$/);
  });
});

import { describe, expect, it } from 'vitest';
import { createHost } from '../host.js';
import { SettingsError } from '../settings/load.js';
import { moduleFiles, probeModule, testAppSettings, useTestHosts } from '../test-support/index.js';

const hosts = useTestHosts();

describe('module loading', () => {
  it('loads modules in LoadModules order, not directory order, and closes them in reverse', async () => {
    const events: string[] = [];
    const home = hosts.home(
      testAppSettings({ AppSettings: { LoadModules: ['zeta', 'alpha', 'mid'] } }),
      moduleFiles(['alpha', 'mid', 'zeta']),
    );
    const running = await hosts.start(home, {
      alpha: probeModule(events),
      mid: probeModule(events),
      zeta: probeModule(events),
    });
    expect(running.host.modules.map((m) => m.id)).toEqual(['zeta', 'alpha', 'mid']);
    expect(events).toEqual(['start:zeta', 'start:alpha', 'start:mid']);
    await running.close();
    expect(events.slice(3)).toEqual(['close:mid', 'close:alpha', 'close:zeta']);
  });

  it('skips a listed module with no folder, no module.json or no implementation, saying why, and still starts', async () => {
    const home = hosts.home(
      testAppSettings({ AppSettings: { LoadModules: ['ok', 'nofolder', 'nojson', 'noimpl', '../escape'] } }),
      {
        ...moduleFiles(['ok', 'noimpl']),
        'modules/nojson/readme.txt': 'no module.json here',
      },
    );
    const running = await hosts.start(home, { ok: probeModule(), nofolder: probeModule(), nojson: probeModule() });
    const skipped = Object.fromEntries(running.host.skippedModules.map((s) => [s.id, s.reason]));
    expect(Object.keys(skipped)).toEqual(['nofolder', 'nojson', 'noimpl', '../escape']);
    expect(skipped.nofolder).toMatch(/no folder/);
    expect(skipped.nojson).toMatch(/no module\.json/);
    expect(skipped.noimpl).toMatch(/no implementation/);
    expect(skipped['../escape']).toMatch(/not a plain module name/);
    const res = await fetch(`${running.url}/ok/api/whoami`);
    expect(res.status).toBe(200);
  });

  it('stops start-up naming the file when a module.json is not valid JSON', async () => {
    const home = hosts.home(testAppSettings({ AppSettings: { LoadModules: ['bad'] } }), {
      'modules/bad/module.json': '{ "ModuleID": "bad", ',
    });
    const attempt = createHost({
      appDir: home.appDir,
      modules: { bad: probeModule() },
      env: {},
      logging: { quiet: true },
    });
    await expect(attempt).rejects.toBeInstanceOf(SettingsError);
    await expect(attempt).rejects.toThrow(
      /not valid module settings: .*modules\/bad\/module\.json:1:\d+: not valid JSON/,
    );
  });

  it('loads a module from the EntryPoint file named in its module.json', async () => {
    const home = hosts.home(testAppSettings({ AppSettings: { LoadModules: ['ext'] } }), {
      'modules/ext/module.json': { ModuleID: 'ext', EntryPoint: './main.mjs', ModuleConfig: { Word: 'hi' } },
      'modules/ext/main.mjs': `export default (ctx) => { const r = ctx.host.createRouter(); r.get('/', (req, res) => res.json({ word: ctx.moduleJson.ModuleConfig.Word })); return { routes: [{ mount: '/ext/api', handler: r }] }; };`,
    });
    const running = await hosts.start(home, {});
    const res = await fetch(`${running.url}/ext/api`);
    expect(await res.json()).toEqual({ word: 'hi' });
  });
});

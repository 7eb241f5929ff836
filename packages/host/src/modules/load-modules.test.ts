import { describe, expect, it } from 'vitest';
import { createHost } from '../host.js';
import type { AckModuleFactory } from './contract.js';
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

  describe('modules given in code', () => {
    const quiet = { quiet: true };
    const greeter =
      (seen: unknown[]): AckModuleFactory =>
      (ctx) => {
        seen.push(ctx.moduleJson.ModuleConfig);
        return {};
      };

    it('load with their module.json given inline, with no folder on disk', async () => {
      const home = hosts.home(testAppSettings({ AppSettings: { LoadModules: ['greeter'] } }));
      const seen: unknown[] = [];
      const host = await createHost({
        appDir: home.appDir,
        modules: { greeter: greeter(seen) },
        moduleSettings: { greeter: { ModuleConfig: { Greeting: 'hello' } } },
        env: {},
        logging: quiet,
      });
      expect(host.modules.map((m) => m.id)).toEqual(['greeter']);
      expect(seen).toEqual([{ Greeting: 'hello' }]);
      await host.close({ graceMs: 0 });
    });

    it('stop start-up, saying why, when LoadModules does not name them', async () => {
      const home = hosts.home(testAppSettings({ AppSettings: { LoadModules: ['other'] } }));
      const attempt = createHost({ appDir: home.appDir, modules: { greeter: greeter([]) }, env: {}, logging: quiet });
      await expect(attempt).rejects.toBeInstanceOf(SettingsError);
      await expect(attempt).rejects.toThrow(
        /module greeter was given to createHost but AppSettings:LoadModules .* does not name it \(it names other\)/,
      );
    });

    it('stop start-up, saying why, when named but without a module.json anywhere', async () => {
      const home = hosts.home(testAppSettings({ AppSettings: { LoadModules: ['greeter'] } }));
      const attempt = createHost({ appDir: home.appDir, modules: { greeter: greeter([]) }, env: {}, logging: quiet });
      await expect(attempt).rejects.toThrow(
        /module greeter was given to createHost but could not be loaded: no folder .*moduleSettings/,
      );
    });

    it('built-in modules (the neighbour) that LoadModules does not name are passed over, as before', async () => {
      const home = hosts.home(testAppSettings({ AppSettings: { LoadModules: [] } }));
      const host = await createHost({
        appDir: home.appDir,
        builtInModules: { greeter: greeter([]) },
        env: {},
        logging: quiet,
      });
      expect(host.modules).toEqual([]);
      await host.close({ graceMs: 0 });
    });
  });
});

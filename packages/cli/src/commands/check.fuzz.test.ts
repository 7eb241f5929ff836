import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { createHost, SettingsError } from '@ack/host';
import { createTestHome, fuzzOptions, type TestHome } from '@ack/host/test-support';
import { builtInModules } from '../registry.js';
import { checkHome } from './check.js';

// Generated settings files through `ack check` (docs/configuration.md, `ack check`): the check
// never throws, never shows a password, and refuses every file that start-up refuses as bad settings
// (a SettingsError: exit 2 from `ack serve`), so that `ack check` passing means the host starts.

const PASSWORD = 'Pw-s3cret-XYZ';
const homes: TestHome[] = [];
afterAll(() => {
  for (const home of homes) home.remove();
});

/** A value of any JSON kind, with the odd ones settings readers trip on. */
const anyValue = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.constantFrom('', ' ', '*', '00:00:30', '-1', '1e309', 'true', 'Memory', 'MySql', 'Redis', 'D', 'P'),
  fc.integer({ min: -5, max: 70_000 }),
  fc.constantFrom(0, -1, 1.5, 1e21, Number.MAX_SAFE_INTEGER),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string({ maxLength: 8 }), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 6 }), fc.string({ maxLength: 6 }), { maxKeys: 2 }),
);

/** Paths of settings that start-up reads, each set to a generated value. */
const KEYS = [
  ['AppSettings', 'ServerPort'],
  ['AppSettings', 'ServerListenAddress'],
  ['AppSettings', 'RunningEnvironment'],
  ['AppSettings', 'LoadModules'],
  ['AppSettings', 'AllowedHosts'],
  ['AppSettings', 'WithOrigins'],
  ['AppSettings', 'UseContractSync'],
  ['AppSettings', 'HostAccessID'],
  ['AppSettings', 'IsConfigurationWatching'],
  ['AppSettings', 'StaticFileImmutablePattern'],
  ['AppSettings', 'SessionState', 'CacheType'],
  ['AppSettings', 'SessionState', 'MySqlConnectionString'],
  ['AppSettings', 'SessionState', 'MySqlTableName'],
  ['AppSettings', 'SessionState', 'RedisConnectionString'],
  ['AppSettings', 'SessionState', 'IdleTimeoutMinutes'],
  ['AppSettings', 'Security', 'MaxContractSyncFileBytes'],
  ['Kestrel', 'Limits', 'MaxRequestBodySize'],
  ['Kestrel', 'Limits', 'RequestHeadersTimeout'],
  ['Kestrel', 'Limits', 'MaxConnectionsPerClient'],
  ['Serilog', 'MinimumLevel'],
] as const;

const connectionStrings = fc.constantFrom(
  `Server=127.0.0.1;Port=1;Database=test;Uid=root;Pwd=${PASSWORD};`,
  `Server=127.0.0.1;Pwd="${PASSWORD}`,
  `Server=127.0.0.1;Pwd=${PASSWORD};Unknown Keyword=1`,
  `127.0.0.1:1,password=${PASSWORD},colour=blue`,
  `Pwd=${PASSWORD}`,
);

const settingsFile = fc.record({
  changes: fc.array(fc.tuple(fc.nat(KEYS.length - 1), anyValue), { maxLength: 4 }),
  store: fc.option(fc.tuple(fc.constantFrom('MySql', 'Redis', 'PostgreSql', 'SqlServer'), connectionStrings)),
  // Mostly whole files; now and then one cut short.
  cut: fc.oneof(
    { weight: 6, arbitrary: fc.constant(null) },
    { weight: 1, arbitrary: fc.double({ min: 0, max: 1, noNaN: true }) },
  ),
});

type SettingsCase = typeof settingsFile extends fc.Arbitrary<infer T> ? T : never;

function writeHome(c: SettingsCase): TestHome {
  const settings: Record<string, Record<string, unknown>> = {
    AppSettings: { LoadModules: ['wwwroot'], SessionState: { StoreStartupWaitSeconds: 0 } },
    Serilog: { WriteTo: [] },
  };
  for (const [index, value] of c.changes) {
    const keys = KEYS[index]!;
    let node: Record<string, unknown> = settings;
    for (const key of keys.slice(0, -1)) node = (node[key] ??= {}) as Record<string, unknown>;
    node[keys.at(-1)!] = value;
  }
  if (c.store) {
    const state = ((settings.AppSettings!.SessionState as Record<string, unknown> | null) ?? {}) as Record<
      string,
      unknown
    >;
    settings.AppSettings!.SessionState = {
      ...state,
      CacheType: c.store[0],
      [`${c.store[0]}ConnectionString`]: c.store[1],
      StoreStartupWaitSeconds: 0,
    };
  }
  const text = JSON.stringify(settings, null, 2);
  const home = createTestHome({}, { 'modules/wwwroot/module.json': { ModuleID: 'wwwroot' } });
  homes.push(home);
  fs.writeFileSync(
    path.join(home.appDir, 'appsettings.json'),
    c.cut === null ? text : text.slice(0, Math.floor(text.length * c.cut)),
  );
  return home;
}

describe('ack check over generated settings files', () => {
  it('never throws, never shows a password, and refuses whatever start-up refuses as bad settings', async () => {
    await fc.assert(
      fc.asyncProperty(settingsFile, async (c) => {
        const home = writeHome(c);
        const report = checkHome(home.appDir);
        expect(JSON.stringify(report)).not.toContain(PASSWORD);
        let refusedAtStart: SettingsError | undefined;
        try {
          const host = await createHost({ appDir: home.appDir, builtInModules, env: {}, logging: { quiet: true } });
          await host.close({ graceMs: 0 });
        } catch (err) {
          if (err instanceof SettingsError) refusedAtStart = err;
          // Anything else (a database that is not there) is not a settings error: exit 1, not 2.
        }
        if (refusedAtStart) {
          expect(report.ok, `start-up refused: ${refusedAtStart.message}`).toBe(false);
          expect(refusedAtStart.message).not.toContain(PASSWORD);
        }
      }),
      fuzzOptions(60),
    );
  }, 120_000);
});

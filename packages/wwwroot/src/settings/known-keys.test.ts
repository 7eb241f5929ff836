import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createHostPaths, loadHostSettings } from '@ack/host/settings';
import { useTestHosts } from '@ack/host/test-support';
import { KNOWN_MODULE_CONFIG_KEYS, parseWwwrootSettings } from './module-settings.js';

// The ModuleConfig keys the wwwroot module knows come from its one settings schema, so a key read
// there is known as soon as it is added; this test holds that list and the documentation together.

const hosts = useTestHosts();
const docs = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../docs');

function warningsFor(
  moduleConfig: Record<string, unknown>,
  appSettings: Record<string, unknown> = {},
): { warnings: string[]; liveReload: boolean } {
  const home = hosts.home(
    { AppSettings: { LoadModules: ['wwwroot'], ...appSettings } },
    { 'modules/wwwroot/module.json': { ModuleID: 'wwwroot', ModuleConfig: moduleConfig } },
  );
  const { settings, file } = loadHostSettings(home.appDir, {});
  const settingsFile = path.join(home.home, 'modules', 'wwwroot', 'module.json');
  const moduleJson = JSON.parse(fs.readFileSync(settingsFile, 'utf8')) as Record<string, unknown>;
  const parsed = parseWwwrootSettings({
    moduleJson,
    settings,
    paths: createHostPaths(path.dirname(file), {}),
    settingsFile,
  });
  return { warnings: parsed.warnings, liveReload: parsed.liveReload };
}

/** `ModuleConfig` keys the documentation names: the list in wire-formats.md, the table in configuration.md, and every `ModuleConfig:Key`. */
function documentedKeys(): Set<string> {
  const keys = new Set<string>();
  const wire = fs.readFileSync(path.join(docs, 'wire-formats.md'), 'utf8');
  const list = /The wwwroot module's `ModuleConfig` keys \(all optional\):([\s\S]*?)\n\n/.exec(wire)?.[1] ?? '';
  for (const m of list.matchAll(/`([A-Z][A-Za-z]+)`/g)) keys.add(m[1]!);
  const configuration = fs.readFileSync(path.join(docs, 'configuration.md'), 'utf8');
  const section = /## The wwwroot module's `module.json`[\s\S]*?\n## /.exec(configuration)?.[0] ?? '';
  for (const m of section.matchAll(/^\| `([A-Z][A-Za-z]+)` \|/gm)) keys.add(m[1]!);
  for (const file of fs.readdirSync(docs).filter((f) => f.endsWith('.md'))) {
    for (const m of fs.readFileSync(path.join(docs, file), 'utf8').matchAll(/ModuleConfig:([A-Z][A-Za-z]+)/g))
      keys.add(m[1]!);
  }
  return keys;
}

describe('the known ModuleConfig keys', () => {
  it('include every key the documentation names, and the documentation names every one', () => {
    const documented = documentedKeys();
    expect(documented.size).toBeGreaterThan(10);
    expect([...documented].filter((k) => !KNOWN_MODULE_CONFIG_KEYS.includes(k))).toEqual([]);
    expect(KNOWN_MODULE_CONFIG_KEYS.filter((k) => !documented.has(k))).toEqual([]);
  });

  it("draw no warning for a module.json that sets every one of them, live reload and the original host's hooks included", () => {
    const all = Object.fromEntries(KNOWN_MODULE_CONFIG_KEYS.map((k) => [k, undefined]));
    const { warnings, liveReload } = warningsFor({
      ...all,
      ContractRequestPath: 'view',
      FileSyncTokens: ['t'],
      CreateIDPolicy: { IsEnabled: 'true', PermitLimit: '5', WindowSeconds: 60 },
      BusinessServerTimeout: '00:00:10',
      SyncRefreshTimeoutMs: '5000',
      IsEnabledHtmxSample: 'false',
      IsEnabledLiveReload: 'false',
      EventAction: [],
      SubscribeAction: [],
    });
    expect(warnings).toEqual([]);
    // A quoted "false" is read as false, as in appsettings.json.
    expect(liveReload).toBe(false);
  });

  it('make a typo, or a key in another case, a warning naming the line and the closest key', () => {
    const { warnings } = warningsFor({ IsEnabledLiveReolad: true, isEnabledHtmxSample: true });
    expect(warnings).toEqual([
      expect.stringMatching(
        /module\.json:\d+:\d+: unknown key "ModuleConfig:IsEnabledLiveReolad" \(ignored\); did you mean `IsEnabledLiveReload`\?$/,
      ),
      expect.stringMatching(
        /module\.json:\d+:\d+: unknown key "ModuleConfig:isEnabledHtmxSample" \(ignored\); did you mean `IsEnabledHtmxSample`\?$/,
      ),
    ]);
  });
});

import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { SettingsError, type HostPaths, type HostSettings, type ModuleJson } from '@ack/host';
import {
  createHostPaths,
  loadHostSettings,
  moduleDirectory,
  moduleJsonPath,
  readModuleJsonFile,
  serilogWarnings,
} from '@ack/host/settings';
import { loadCatalog, parseWwwrootSettings } from '@ack/wwwroot';
import { builtInModules } from '../registry.js';
import { EXIT } from '../exit-codes.js';
import { checkConnections, connectLine } from './check-connect.js';

export interface CheckReport {
  ok: boolean;
  /** The appsettings.json checked. */
  settingsFile: string;
  /** What stops the host from starting (or, for a catalog secret, from starting safely). */
  errors: string[];
  /** What the host would start with but log as a warning (typos, skipped modules, missing files). */
  warnings: string[];
}

/**
 * `ack check`: reads a home's settings, module settings and shared-file catalog as the host does at
 * start, without starting anything or writing a file, and says what would stop start-up (errors)
 * and what start-up would warn about. Like `nginx -t`: exit 0 when the host would start, 2 when not.
 */
export function checkHome(appDir: string): CheckReport {
  const settingsFile = path.join(appDir, 'appsettings.json');
  const errors: string[] = [];
  const warnings: string[] = [];
  const report = () => ({ ok: errors.length === 0, settingsFile, errors, warnings });
  let settings: HostSettings;
  let paths: HostPaths;
  try {
    const loaded = loadHostSettings(appDir);
    settings = loaded.settings;
    warnings.push(...loaded.warnings, ...serilogWarnings(loaded.settings.Serilog));
    paths = createHostPaths(path.dirname(loaded.file));
  } catch (err) {
    if (!(err instanceof SettingsError)) throw err;
    errors.push(...err.message.split('\n'));
    return report();
  }

  const ids = [...new Set(settings.AppSettings.LoadModules.map((n) => n.trim()).filter(Boolean))];
  let loading = 0;
  for (const id of ids) {
    if (!/^[A-Za-z0-9_.-]+$/.test(id) || id === '.' || id === '..') {
      warnings.push(`module ${id} will be skipped: not a plain module name`);
      continue;
    }
    const directory = moduleDirectory(settings, paths, id);
    const settingsFile = moduleJsonPath(settings, paths, id);
    if (!fs.existsSync(settingsFile)) {
      warnings.push(
        `module ${id} will be skipped: no ${fs.existsSync(directory) ? `module.json in ${directory}` : `folder ${directory}`}`,
      );
      continue;
    }
    let moduleJson: ModuleJson;
    try {
      // The reader start-up uses, so the check says what start-up would.
      const read = readModuleJsonFile(settingsFile);
      moduleJson = read.moduleJson;
      warnings.push(...read.warnings);
    } catch (err) {
      errors.push((err as Error).message);
      continue;
    }
    const entryPoint =
      typeof moduleJson.EntryPoint === 'string' && moduleJson.EntryPoint.trim() !== ''
        ? path.resolve(directory, moduleJson.EntryPoint)
        : undefined;
    if (!(id in builtInModules)) {
      if (!entryPoint)
        warnings.push(
          `module ${id} will be skipped: no implementation (not built in, and module.json has no EntryPoint)`,
        );
      else if (!fs.existsSync(entryPoint)) errors.push(`${settingsFile}: EntryPoint ${entryPoint} does not exist`);
      else loading++;
      continue;
    }
    loading++;
    if (id === 'wwwroot') checkWwwroot({ moduleJson, settings, paths, settingsFile }, errors, warnings);
  }
  if (loading === 0) warnings.push('no module will load: every request would be answered 404');
  return report();
}

function checkWwwroot(source: Parameters<typeof parseWwwrootSettings>[0], errors: string[], warnings: string[]): void {
  let wwwroot: ReturnType<typeof parseWwwrootSettings>;
  try {
    wwwroot = parseWwwrootSettings(source);
  } catch (err) {
    errors.push((err as Error).message);
    return;
  }
  warnings.push(...wwwroot.warnings);
  if (!fs.existsSync(wwwroot.wwwrootBasePath))
    warnings.push(`static root ${wwwroot.wwwrootBasePath} does not exist (ModuleConfig:WWWRootBasePath)`);
  if (!wwwroot.sharedFileConfigPath) return;
  const catalog = loadCatalog(wwwroot.sharedFileConfigPath, source.paths.resolve);
  if (!catalog.ok) {
    warnings.push(`shared files would be off: ${catalog.reason}`);
    return;
  }
  for (const r of catalog.refused)
    errors.push(
      `${r.where}: refused to publish ${r.requestPath} -> ${r.hostFilePath}: ${r.reason}, which must never be public`,
    );
  warnings.push(...catalog.notes);
  for (const item of catalog.catalog.items) {
    if (!fs.existsSync(item.hostFilePath))
      warnings.push(
        `shared file ${item.requestPath}: ${item.hostFilePath} does not exist (requests pass on until it does)`,
      );
  }
}

export function registerCheck(program: Command): void {
  program
    .command('check')
    .description(
      'check an application home (settings, module settings, shared-file catalog) without starting it; exit 2 on errors',
    )
    .option('--app-dir <dir>', 'folder holding appsettings.json (default: the current folder)')
    .option(
      '--connect',
      "also try to connect to the session store and the modules' addresses (BusinessServerUrl); exit 1 when one fails",
    )
    .option('--json', 'print one JSON document: { ok, settingsFile, errors, warnings, connect? }')
    .action(async (opts: { appDir?: string; json?: boolean; connect?: boolean }) => {
      const appDir = path.resolve(opts.appDir ?? process.cwd());
      const result = checkHome(appDir);
      // The addresses are tried only for settings that read: a home that would not start has nothing to reach.
      const connect = opts.connect && result.ok ? await checkConnections(appDir) : undefined;
      const unreachable = connect?.filter((t) => t.result === 'failed').length ?? 0;
      if (opts.json)
        process.stdout.write(
          JSON.stringify({ ...result, ok: result.ok && unreachable === 0, ...(connect ? { connect } : {}) }, null, 2) +
            '\n',
        );
      else {
        const lines = [...result.errors.map((e) => `error: ${e}`), ...result.warnings.map((w) => `warning: ${w}`)];
        lines.push(...(connect ?? []).map(connectLine));
        lines.push(
          !result.ok
            ? `${result.settingsFile}: check failed: ${result.errors.length} error(s), ${result.warnings.length} warning(s)`
            : unreachable > 0
              ? `${result.settingsFile}: settings ok, but ${unreachable} of ${connect!.length} address(es) could not be reached`
              : `${result.settingsFile}: ok${result.warnings.length > 0 ? ` (${result.warnings.length} warning(s))` : ''}`,
        );
        (result.ok && unreachable === 0 ? process.stdout : process.stderr).write(lines.join('\n') + '\n');
      }
      process.exit(!result.ok ? EXIT.usage : unreachable > 0 ? EXIT.failed : EXIT.ok);
    });
}

import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { SettingsError } from '../settings/load.js';
import { moduleDirectory, moduleJsonPath, readModuleJsonFile } from './module-json.js';
import type { AckModuleFactory, HostServices, ModuleContributions, ModuleJson, ModuleRegistry } from './contract.js';
import type { HostSettings } from '../settings/schema.js';
import type { HostPaths } from '../paths/host-paths.js';
import type { Logger } from '../logging/logger.js';

export interface LoadedModule {
  id: string;
  directory: string;
  contributions: ModuleContributions;
}

export interface SkippedModule {
  id: string;
  reason: string;
  /**
   * Its folder is there but it could not be loaded (no `module.json`, no implementation): readiness
   * fails for it (docs/operations.md "Health"). A name without a folder is a module not installed.
   */
  failed?: boolean;
}

/**
 * Loads the modules named in `LoadModules`, in that order (not directory order). A name with no
 * folder, no `module.json` (on disk, or given in code for a module given in code) or no
 * implementation is skipped with a reason; a `module.json` that is
 * not valid JSON stops start-up naming the file. The implementation comes from the registry the
 * caller hands in (built-in modules) or from the module's `EntryPoint` file.
 */
export async function loadModules(
  settings: HostSettings,
  paths: HostPaths,
  registry: ModuleRegistry,
  logger: Logger,
  host: HostServices,
  options: {
    /** Gives a module's lines a file of their own (`ModuleConfig:ModuleLogFilePath`). */
    addModuleLogFile?: (id: string, file: string) => void;
    /** `module.json` contents of modules given in code, used when their folder has none. */
    inline?: Readonly<Record<string, ModuleJson>>;
  } = {},
): Promise<{ loaded: LoadedModule[]; skipped: SkippedModule[] }> {
  const { addModuleLogFile, inline = {} } = options;
  const loaded: LoadedModule[] = [];
  const skipped: SkippedModule[] = [];
  const seen = new Set<string>();
  for (const id of settings.AppSettings.LoadModules.map((n) => n.trim()).filter(Boolean)) {
    if (seen.has(id)) continue;
    seen.add(id);
    if (!/^[A-Za-z0-9_.-]+$/.test(id) || id === '.' || id === '..') {
      skipped.push({ id, reason: 'not a plain module name' });
      continue;
    }
    const directory = moduleDirectory(settings, paths, id);
    const settingsFile = moduleJsonPath(settings, paths, id);
    const given = registry[id] && Object.hasOwn(inline, id) ? inline[id] : undefined;
    let moduleJson: ModuleJson;
    if (given && !fs.existsSync(settingsFile)) {
      // A module given in code with its settings: no folder or file needed (docs/api.md).
      moduleJson = { ModuleID: id, ...given };
    } else {
      if (!isDirectory(directory)) {
        skipped.push({ id, reason: `no folder ${directory}` });
        continue;
      }
      if (!fs.existsSync(settingsFile)) {
        skipped.push({ id, reason: `no module.json in ${directory}`, failed: true });
        continue;
      }
      const read = readModuleJsonFile(settingsFile);
      for (const warning of read.warnings) logger.warn(warning);
      moduleJson = read.moduleJson;
    }
    const factory = registry[id] ?? (await importEntryPoint(directory, settingsFile, moduleJson));
    if (!factory) {
      skipped.push({ id, reason: 'no implementation (not built in, and module.json has no EntryPoint)', failed: true });
      continue;
    }
    const moduleLogFile = moduleJson.ModuleConfig?.ModuleLogFilePath;
    if (addModuleLogFile && typeof moduleLogFile === 'string' && moduleLogFile.trim() !== '')
      addModuleLogFile(id, paths.resolve(moduleLogFile));
    const moduleLogger = logger.child(id);
    let contributions: ModuleContributions;
    try {
      contributions = await factory({
        id,
        directory,
        settingsFile,
        moduleJson,
        settings,
        paths,
        logger: moduleLogger,
        host,
      });
    } catch (err) {
      if (err instanceof SettingsError) throw err;
      throw new Error(`module ${id} failed to start: ${(err as Error).message}`, { cause: err });
    }
    loaded.push({ id, directory, contributions });
  }
  return { loaded, skipped };
}

async function importEntryPoint(
  directory: string,
  settingsFile: string,
  moduleJson: ModuleJson,
): Promise<AckModuleFactory | undefined> {
  if (typeof moduleJson.EntryPoint !== 'string' || moduleJson.EntryPoint.trim() === '') return undefined;
  const file = path.resolve(directory, moduleJson.EntryPoint);
  if (!fs.existsSync(file)) throw new SettingsError(`${settingsFile}: EntryPoint ${file} does not exist`);
  const mod = (await import(pathToFileURL(file).href)) as { default?: unknown };
  if (typeof mod.default !== 'function')
    throw new SettingsError(`${settingsFile}: EntryPoint ${file} has no default export function`);
  return mod.default as AckModuleFactory;
}

function isDirectory(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/**
 * A module handed to `createHost` in code that did not load is a mistake, not a choice: the host
 * would otherwise start without it and answer 404 for its routes (docs/api.md).
 */
export function requireGivenModules(
  given: readonly string[],
  result: { loaded: readonly LoadedModule[]; skipped: readonly SkippedModule[] },
  loadModules: readonly string[],
  paths: HostPaths,
): void {
  for (const id of given) {
    if (result.loaded.some((m) => m.id === id)) continue;
    const skipped = result.skipped.find((m) => m.id === id);
    throw new SettingsError(
      skipped
        ? `module ${id} was given to createHost but could not be loaded: ${skipped.reason} (put a module.json there, or pass its settings in moduleSettings)`
        : `module ${id} was given to createHost but AppSettings:LoadModules in ${path.join(paths.entryBasePath, 'appsettings.json')} does not name it (it names ${loadModules.length === 0 ? 'none' : loadModules.join(', ')})`,
    );
  }
}

/** One line per module: what loaded from where, what was skipped and why, and a warning when none loaded. */
export function logModuleOutcome(
  result: { loaded: readonly LoadedModule[]; skipped: readonly SkippedModule[] },
  settings: HostSettings,
  paths: HostPaths,
  logger: Logger,
): void {
  const app = settings.AppSettings;
  for (const s of result.skipped) logger.info(`module ${s.id} skipped: ${s.reason}`);
  for (const m of result.loaded) logger.info(`module ${m.id} loaded from ${m.directory}`);
  if (result.loaded.length === 0) {
    logger.warn(
      `no module loaded: every request will be answered 404 (AppSettings:LoadModules names ${app.LoadModules.length === 0 ? 'none' : app.LoadModules.join(', ')}; modules are looked for in ${paths.resolve(app.LoadModuleBasePath)})`,
    );
  }
}

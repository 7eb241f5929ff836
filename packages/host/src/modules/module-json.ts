import path from 'node:path';
import { SettingsError } from '../settings/load.js';
import { readJsonFile } from '../settings/json-file.js';
import type { HostSettings } from '../settings/schema.js';
import type { HostPaths } from '../paths/host-paths.js';
import type { ModuleJson } from './contract.js';

/** `<LoadModuleBasePath>/<id>`: the folder of module `id` (the id is not checked here). */
export function moduleDirectory(settings: HostSettings, paths: HostPaths, id: string): string {
  return path.join(paths.resolve(settings.AppSettings.LoadModuleBasePath), id);
}

/** `<LoadModuleBasePath>/<id>/module.json`. */
export function moduleJsonPath(settings: HostSettings, paths: HostPaths, id: string): string {
  return path.join(moduleDirectory(settings, paths, id), 'module.json');
}

/**
 * Reads a `module.json` as start-up does, and as appsettings.json is read: comments, trailing
 * commas and a BOM are accepted, errors give line and column. The top level must be an object.
 * Throws a `SettingsError` naming the file.
 */
export function readModuleJson(file: string): ModuleJson {
  try {
    const parsed = readJsonFile(file).value;
    if (!isModuleJson(parsed)) throw new Error(`${file}: the top level must be an object`);
    return parsed;
  } catch (err) {
    throw new SettingsError(`not valid module settings: ${(err as Error).message}`);
  }
}

function isModuleJson(value: unknown): value is ModuleJson {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

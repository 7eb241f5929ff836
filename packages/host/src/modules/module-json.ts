import path from 'node:path';
import { z } from 'zod';
import { SettingsError } from '../settings/load.js';
import { readJsonFile, type JsonFile } from '../settings/json-file.js';
import { describeUnknownKeys, findUnknownKeys } from '../settings/unknown-keys.js';
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

/** A `module.json` as read from its file. */
export interface ModuleJsonFile {
  moduleJson: ModuleJson;
  /** `line:column` of the value at a path (keys matched ignoring case), for messages. */
  locate: JsonFile['locate'];
  /** Top-level keys no reader knows (typos), one warning line each with the closest known key. */
  warnings: string[];
}

/**
 * The top-level keys of `module.json`: the original host's, plus `EntryPoint`. `ModuleConfig` is
 * the module's own; the module says which of its keys it knows (docs/configuration.md).
 */
const ModuleJsonKeys = z
  .looseObject(
    Object.fromEntries(
      [
        'ModuleID',
        'Name',
        'ApplicationID',
        'Company',
        'IsRequiredLicense',
        'IsBundledWithHost',
        'IsCopyContract',
        'IsPurgeContract',
        'Version',
        'LoadPassAssemblyPath',
        'EntryPoint',
      ].map((k) => [k, z.unknown()]),
    ),
  )
  .extend({ ModuleConfig: z.record(z.string(), z.unknown()).optional() });

/**
 * Reads a `module.json` as start-up does, and as appsettings.json is read: comments, trailing
 * commas and a BOM are accepted, errors give line and column. The top level must be an object.
 * Throws a `SettingsError` naming the file.
 */
export function readModuleJsonFile(file: string): ModuleJsonFile {
  let json: JsonFile;
  try {
    json = readJsonFile(file);
    if (!isModuleJson(json.value)) throw new Error(`${file}: the top level must be an object`);
  } catch (err) {
    throw new SettingsError(`not valid module settings: ${(err as Error).message}`);
  }
  const moduleJson = json.value as ModuleJson;
  return {
    moduleJson,
    locate: json.locate,
    warnings: describeUnknownKeys(file, json, findUnknownKeys(moduleJson, ModuleJsonKeys)),
  };
}

/** `readModuleJsonFile` for a caller that needs the settings only. */
export function readModuleJson(file: string): ModuleJson {
  return readModuleJsonFile(file).moduleJson;
}

function isModuleJson(value: unknown): value is ModuleJson {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

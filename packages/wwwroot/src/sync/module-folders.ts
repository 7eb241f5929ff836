import path from 'node:path';
import { moduleJsonPath, readModuleJson } from '@ack/host/settings';
import type { WwwrootRuntime } from '../runtime.js';

/**
 * The contract folder a sync upload writes into (docs/sync.md): for `wwwroot` its `ContractBasePath`;
 * for another module the first `ContractBasePath` in its `module.json`, else
 * `<EntryBasePath>/../contracts/<module>`. `module.json` is read on each call (it is small, and a
 * module folder may be added while the host runs).
 */
export async function contractFolderOf(runtime: WwwrootRuntime, moduleName: string): Promise<string> {
  if (moduleName === 'wwwroot') return runtime.settings.contractBasePath;
  const { ctx } = runtime;
  let configured: string | undefined;
  try {
    // Read as start-up reads it (comments, trailing commas).
    const value = readModuleJson(moduleJsonPath(ctx.settings, ctx.paths, moduleName)).ModuleConfig?.ContractBasePath;
    const first = Array.isArray(value) ? value.find((v) => typeof v === 'string' && v.trim() !== '') : value;
    if (typeof first === 'string' && first.trim() !== '') configured = first;
  } catch {
    // no module.json (or not valid): the default folder
  }
  return configured
    ? ctx.paths.resolve(configured)
    : path.resolve(ctx.paths.entryBasePath, '..', 'contracts', moduleName);
}

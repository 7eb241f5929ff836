import fs from 'node:fs/promises';
import path from 'node:path';
import type { WwwrootRuntime } from '../runtime.js';

/**
 * The contract folder a sync upload writes into (DESIGN §5): for `wwwroot` its `ContractBasePath`;
 * for another module the first `ContractBasePath` in its `module.json`, else
 * `<EntryBasePath>/../contracts/<module>`. `module.json` is read on each call (it is small, and a
 * module folder may be added while the host runs).
 */
export async function contractFolderOf(runtime: WwwrootRuntime, moduleName: string): Promise<string> {
  if (moduleName === 'wwwroot') return runtime.settings.contractBasePath;
  const { ctx } = runtime;
  const moduleBase = ctx.paths.resolve(ctx.settings.AppSettings.LoadModuleBasePath);
  const moduleJson = path.join(moduleBase, moduleName, 'module.json');
  let configured: string | undefined;
  try {
    const parsed = JSON.parse((await fs.readFile(moduleJson, 'utf8')).replace(/^\uFEFF/, '')) as { ModuleConfig?: { ContractBasePath?: unknown } };
    const value = parsed?.ModuleConfig?.ContractBasePath;
    const first = Array.isArray(value) ? value.find((v) => typeof v === 'string' && v.trim() !== '') : value;
    if (typeof first === 'string' && first.trim() !== '') configured = first;
  } catch {
    // no module.json (or not JSON): the default folder
  }
  return configured ? ctx.paths.resolve(configured) : path.resolve(ctx.paths.entryBasePath, '..', 'contracts', moduleName);
}

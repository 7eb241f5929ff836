import fs from 'node:fs';
import path from 'node:path';
import { loadHostSettings } from '../settings/load.js';
import { createHostPaths } from '../paths/host-paths.js';
import { moduleJsonPath, readModuleJson } from '../modules/module-json.js';
import { isPlainModuleID } from '../modules/module-id.js';

/**
 * `AppSettings:IsConfigurationWatching` in the primary (docs/scale-out.md): watches the folders of
 * appsettings.json and of each module.json, and calls `onChange` once edits settle (an editor
 * writes a file in several steps). The caller validates before it restarts anything.
 */
export interface ConfigWatch {
  close(): void;
}

export function watchConfiguration(
  files: readonly string[],
  onChange: (file: string) => void,
  settleMs = 300,
): ConfigWatch {
  const byDir = new Map<string, Set<string>>();
  for (const file of files) {
    const dir = path.dirname(file);
    if (!byDir.has(dir)) byDir.set(dir, new Set());
    byDir.get(dir)!.add(path.basename(file));
  }
  let timer: NodeJS.Timeout | undefined;
  let changed = '';
  const watchers: fs.FSWatcher[] = [];
  for (const [dir, names] of byDir) {
    try {
      const watcher = fs.watch(dir, (_event, name) => {
        // Some platforms give no name: treat it as a change to one of the watched files.
        if (name !== null && !names.has(String(name))) return;
        changed = path.join(dir, name === null ? [...names][0]! : String(name));
        clearTimeout(timer);
        timer = setTimeout(() => onChange(changed), settleMs);
      });
      watcher.on('error', () => {});
      watchers.push(watcher);
    } catch {
      // A module folder that does not exist yet has nothing to watch.
    }
  }
  return {
    close() {
      clearTimeout(timer);
      for (const w of watchers) w.close();
    },
  };
}

/** appsettings.json and the module.json of every module named in `LoadModules`. */
export function configurationFiles(appDir: string, env: NodeJS.ProcessEnv): string[] {
  const { settings, file } = loadHostSettings(appDir, env);
  const paths = createHostPaths(path.dirname(file), env);
  const ids = settings.AppSettings.LoadModules.map((n) => n.trim()).filter(isPlainModuleID);
  return [file, ...ids.map((id) => moduleJsonPath(settings, paths, id))];
}

/**
 * Reads the files as start-up would: the host settings validated, every module.json parsed.
 * Returns the first problem, or undefined when a worker started now would accept them. (What a
 * module itself checks in its settings shows when the new worker starts: a worker that fails to
 * start stops the rolling restart and the running workers keep serving.)
 */
export function checkConfiguration(appDir: string, env: NodeJS.ProcessEnv): string | undefined {
  try {
    for (const file of configurationFiles(appDir, env).slice(1)) {
      if (fs.existsSync(file)) readModuleJson(file);
    }
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

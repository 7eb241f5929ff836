import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ACK_BIN } from './spawn-ack.js';

// Which modules a run of the built `ack` loaded, for the tests that check what loads only when used
// (docs/architecture.md). The command is one esbuild bundle: a file of it (dist/bin.js, dist/chunks/)
// stands for every module esbuild put in it, which it names in a `// path` line before each one's
// code (paths from packages/cli: `../host/dist/...`, `../../node_modules/.pnpm/.../express/...`).
// Packages left outside the bundle load from node_modules as files of their own.

const BUNDLE_DIR = path.dirname(ACK_BIN);
const isBundleFile = (file: string) => file === ACK_BIN || path.dirname(file) === path.join(BUNDLE_DIR, 'chunks');

/** The file itself and, for a file of the bundle, every module it holds. */
function modulesIn(file: string): string[] {
  if (!isBundleFile(file)) return [file];
  const text = fs.readFileSync(file, 'utf8');
  return [file, ...[...text.matchAll(/^\/\/ (\S+\.(?:[cm]?js|json))$/gm)].map((m) => m[1]!)];
}

export interface ModuleRecorder {
  /** Node options that make an `ack` run record what it loads (`NODE_OPTIONS` or argv). */
  readonly nodeOptions: string[];
  /** Every module the runs since the last call loaded (file paths and bundled module paths). */
  take(): string[];
}

/**
 * Records the ES modules loaded (a module load hook) and the CommonJS ones (`require.cache` at exit;
 * ES imports of CommonJS packages land there too) into files under `dir`.
 */
export function recordLoadedModules(dir: string): ModuleRecorder {
  const esm = path.join(dir, 'loaded-esm.txt');
  const cjs = path.join(dir, 'loaded-cjs.txt');
  fs.writeFileSync(
    path.join(dir, 'hooks.mjs'),
    `import fs from 'node:fs';
export async function load(url, context, next) {
  if (url.startsWith('file:')) fs.appendFileSync(${JSON.stringify(esm)}, url + '\\n');
  return next(url, context);
}`,
  );
  fs.writeFileSync(
    path.join(dir, 'register.mjs'),
    `import { register } from 'node:module';
register(${JSON.stringify(pathToFileURL(path.join(dir, 'hooks.mjs')).href)});`,
  );
  fs.writeFileSync(
    path.join(dir, 'preload.cjs'),
    `const fs = require('node:fs');
process.on('exit', () => fs.appendFileSync(${JSON.stringify(cjs)}, Object.keys(require.cache).join('\\n') + '\\n'));`,
  );
  const read = (file: string) => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);
  return {
    nodeOptions: [
      '--import',
      pathToFileURL(path.join(dir, 'register.mjs')).href,
      '--require',
      path.join(dir, 'preload.cjs'),
    ],
    take() {
      const files = [...read(esm).map((u) => fileURLToPath(u)), ...read(cjs)];
      fs.rmSync(esm, { force: true });
      fs.rmSync(cjs, { force: true });
      return [...new Set(files.flatMap(modulesIn))];
    },
  };
}

// Builds the browser bundles of @ack/loader with esbuild (type declarations come from `tsc -b`):
//   dist/ack.loader.js   IIFE for <script src>, one global `AckLoader` (entry src/iife.ts)
//   dist/ack.loader.mjs  ES module (entry src/index.ts)
// both minified with source maps, and copies the IIFE to the example host's static root, which
// serves it at /lib/ack.loader.js. `node build.mjs` writes; tests import `bundle()` to build in memory.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';

const here = path.dirname(fileURLToPath(import.meta.url));
export const distDir = path.join(here, 'dist');
export const exampleLibDir = path.resolve(here, '../../examples/basic/modules/wwwroot/wwwroot/lib');

const common = {
  bundle: true,
  minify: true,
  sourcemap: true,
  target: ['es2020', 'chrome90', 'firefox90', 'safari15'],
  platform: 'browser',
  legalComments: 'none',
  logLevel: 'warning',
};

export const bundleOptions = {
  iife: {
    ...common,
    entryPoints: [path.join(here, 'src/iife.ts')],
    format: 'iife',
    globalName: 'AckLoader',
    outfile: path.join(distDir, 'ack.loader.js'),
  },
  esm: {
    ...common,
    entryPoints: [path.join(here, 'src/index.ts')],
    format: 'esm',
    outfile: path.join(distDir, 'ack.loader.mjs'),
  },
};

/** Builds both bundles in memory: `{ iife: { code, map }, esm: { code, map } }`. */
export async function bundle() {
  const out = {};
  for (const [name, options] of Object.entries(bundleOptions)) {
    const { outputFiles } = await esbuild.build({ ...options, write: false });
    out[name] = {
      code: outputFiles.find((f) => !f.path.endsWith('.map')).text,
      map: outputFiles.find((f) => f.path.endsWith('.map')).text,
    };
  }
  return out;
}

/** Writes dist/ and the example copy; returns the in-memory bundles. */
export async function build() {
  const out = await bundle();
  fs.mkdirSync(distDir, { recursive: true });
  fs.mkdirSync(exampleLibDir, { recursive: true });
  const write = (file, text) => {
    // Temporary file + rename: a host serving the file meanwhile sees the old one or the new one.
    // The temporary file sits outside dist/, so a `pnpm pack` meanwhile never lists it.
    const tmp = path.join(here, `.build-${process.pid}-${path.basename(file)}.tmp`);
    fs.writeFileSync(tmp, text);
    fs.renameSync(tmp, file);
  };
  write(path.join(distDir, 'ack.loader.js'), out.iife.code);
  write(path.join(distDir, 'ack.loader.js.map'), out.iife.map);
  write(path.join(distDir, 'ack.loader.mjs'), out.esm.code);
  write(path.join(distDir, 'ack.loader.mjs.map'), out.esm.map);
  write(path.join(exampleLibDir, 'ack.loader.js'), out.iife.code);
  write(path.join(exampleLibDir, 'ack.loader.js.map'), out.iife.map);
  return out;
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const out = await build();
  const { gzipSync } = await import('node:zlib');
  console.log(
    `@ack/loader: ack.loader.js ${out.iife.code.length} B, ${gzipSync(out.iife.code, { level: 9 }).length} B gzip`,
  );
}

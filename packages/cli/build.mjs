// Bundles the `ack` command with esbuild, after `tsc -b` (docs/architecture.md "What loads only when
// used"): dist/main.js (the compiled entry) and everything it imports, @ack/host and @ack/wwwroot
// included, become dist/bin.js plus dist/chunks/ for each lazy `import()` (the commands, the session
// stores), so start-up reads a few files instead of about 400. The libraries stay plain tsc output;
// only this executable is bundled. `node build.mjs` writes; the serve-lazy test reads EXTERNAL.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const here = path.dirname(fileURLToPath(import.meta.url));
const dist = path.join(here, 'dist');

/**
 * Packages left out of the bundle, loaded from node_modules when used:
 * - ws, multer, winston-daily-rotate-file (and moment): the host loads them at their first use, by
 *   `createRequire` from its own package; external, an eager import of one would show in the
 *   serve-lazy test as a package loaded at start-up;
 * - the session store drivers: optional peers of @ack/host, so a missing one still stops start-up
 *   with its `npm install` line;
 * - optional native helpers the libraries try to load.
 */
export const EXTERNAL = [
  'ws',
  'multer',
  'winston-daily-rotate-file',
  'moment',
  'knex',
  'mysql2',
  'pg',
  'tedious',
  'redis',
  'bufferutil',
  'utf-8-validate',
  'fsevents',
];

/** Our three packages, whose code reads files beside it (`import.meta.url`). */
const OWN = { cli: '@ack/cli', host: '@ack/host', wwwroot: '@ack/wwwroot' };
const ownFile = /[\\/]packages[\\/](cli|host|wwwroot)[\\/]dist[\\/](.+\.js)$/;

/**
 * In the bundle `import.meta.url` is the bundle's URL, not the module's. Each of our modules gets
 * back the URL it has in its installed package (resolved by package name from the bundle, which
 * depends on all three), so the CLI still finds its package.json, wwwroot the htmx.org asset and
 * the loader, and the host its lazily loaded packages from its own dependencies.
 */
const ownUrls = {
  name: 'own-module-urls',
  setup(build) {
    build.onLoad({ filter: ownFile }, async (args) => {
      const [, pkg, file] = ownFile.exec(args.path);
      let text = await fs.promises.readFile(args.path, 'utf8');
      if (text.includes('import.meta.url')) {
        const url = `new URL(${JSON.stringify(`./${file.split(path.sep).join('/')}`)}, import.meta.resolve(${JSON.stringify(OWN[pkg])}).replace(/[^/]*$/, '')).href`;
        text = text.replaceAll('import.meta.url', url);
      }
      return { contents: text, loader: 'js', resolveDir: path.dirname(args.path) };
    });
  },
};

/**
 * zod exports every language's messages (`z.locales`, `z.core.locales`: 64 modules, a seventh of the bundle);
 * nothing here reads them, and zod takes its English default from its own module, not from these.
 */
const noZodLocales = {
  name: 'no-zod-locales',
  setup(build) {
    build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]node_modules[\\/]zod[\\/]v4[\\/]/.test(args.importer)
        ? { path: 'zod-locales', namespace: 'no-zod-locales' }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'no-zod-locales' }, () => ({ contents: 'export {};', loader: 'js' }));
  },
};

/**
 * `node:http` is taken with require(), not import: an import makes Node build an ES module view of
 * it, which reads every export, and on Node 22 one of them loads Node's bundled fetch and WebSocket
 * client (undici): about 20 ms more for `ack sync upload --help`. Taking every Node module this way
 * measured slower for `ack serve`, so only this one is (docs/benchmarks.md "Start-up profile").
 */
const httpByRequire = {
  name: 'http-by-require',
  setup(build) {
    build.onResolve({ filter: /^(node:)?http$/ }, (args) =>
      args.kind === 'require-call' ? undefined : { path: args.path, namespace: 'http-by-require' },
    );
    build.onLoad({ filter: /.*/, namespace: 'http-by-require' }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(args.path)});`,
      loader: 'js',
    }));
  },
};

/**
 * commander takes `node:child_process` when it loads, for subcommands that are programs of their
 * own, which ack has none of: its copy is taken at its first use instead. Loading it (and, with it,
 * the modules it needs that a command does not) cost every command's start a few milliseconds
 * (docs/benchmarks.md "Releases").
 */
const lazyChildProcess = {
  name: 'lazy-child-process',
  setup(build) {
    build.onResolve({ filter: /^(node:)?child_process$/ }, (args) =>
      /[\\/]node_modules[\\/]commander[\\/]/.test(args.importer)
        ? { path: args.path, namespace: 'lazy-child-process' }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'lazy-child-process' }, () => ({
      contents:
        "let loaded;\nconst real = () => (loaded ??= require('node:child_process'));\nmodule.exports = { spawn: (...args) => real().spawn(...args) };",
      loader: 'js',
    }));
  },
};

export const bundleOptions = {
  entryPoints: { bin: path.join(dist, 'main.js') },
  outdir: dist,
  // The `// path` line esbuild writes before each module's code is relative to this folder (the
  // tests that check what loads read those lines).
  absWorkingDir: here,
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20.19',
  // jsonc-parser's `main` is a UMD build whose own require calls break once bundled.
  mainFields: ['module', 'main'],
  external: EXTERNAL,
  // CommonJS libraries in an ES module bundle still call require() for Node's own modules.
  banner: {
    js: "import { createRequire as __ackRequire } from 'node:module';\nconst require = __ackRequire(import.meta.url);",
  },
  plugins: [ownUrls, noZodLocales, httpByRequire, lazyChildProcess],
  legalComments: 'none',
  logLevel: 'warning',
  metafile: true,
};

export async function build() {
  // Chunk names carry a content hash: the previous build's must not stay beside the new ones.
  fs.rmSync(path.join(dist, 'chunks'), { recursive: true, force: true });
  return esbuild.build(bundleOptions);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { metafile } = await build();
  if (process.env.ACK_BUNDLE_META) fs.writeFileSync(process.env.ACK_BUNDLE_META, JSON.stringify(metafile));
}

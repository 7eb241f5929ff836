#!/usr/bin/env node
// Removes compiler output whose TypeScript source is gone (`node ../../scripts/prune-dist.mjs`, run
// by each package's build after `tsc -b`). tsc never deletes the output of a moved or removed
// source, so without this a renamed folder would keep its old files in dist/ and ship them in the
// package (docs/releasing.md). Only tsc's outputs are touched: a file counts as one when its
// declaration (`X.d.ts`) sits beside it or its source map names one source; other files (the
// loader's esbuild bundles, whose maps name many) are left alone.
import fs from 'node:fs';
import path from 'node:path';

const pkg = process.cwd();
const dist = path.join(pkg, 'dist');
const src = path.join(pkg, 'src');
const OUTPUT = /^(.*?)(\.d\.ts\.map|\.d\.ts|\.js\.map|\.js)$/;
let removed = 0;

function prune(dir) {
  const entries = fs.readdirSync(dir, { withFileTypes: true });
  // Every file is judged before any is removed (removing `X.d.ts` first must not spare `X.js`).
  const declared = new Set(
    entries.filter((e) => e.isFile() && e.name.endsWith('.d.ts')).map((e) => e.name.slice(0, -'.d.ts'.length)),
  );
  const stale = entries.filter((entry) => {
    const m = entry.isFile() ? OUTPUT.exec(entry.name) : null;
    if (!m) return false;
    const base = path.join(dir, m[1]);
    const fromTsc = declared.has(m[1]) || [`${base}.js.map`, `${base}.d.ts.map`].some(oneSource);
    return fromTsc && !fs.existsSync(path.join(src, `${path.relative(dist, base)}.ts`));
  });
  for (const entry of stale) {
    fs.rmSync(path.join(dir, entry.name));
    removed++;
  }
  for (const entry of entries.filter((e) => e.isDirectory())) {
    const sub = path.join(dir, entry.name);
    prune(sub);
    if (fs.readdirSync(sub).length === 0) fs.rmdirSync(sub);
  }
}

/** A source map of one TypeScript file: what tsc writes for each output. */
function oneSource(map) {
  try {
    const { sources } = JSON.parse(fs.readFileSync(map, 'utf8'));
    return Array.isArray(sources) && sources.length === 1 && /\.ts$/.test(sources[0]);
  } catch {
    return false;
  }
}

if (fs.existsSync(dist)) prune(dist);
if (removed > 0) process.stdout.write(`${path.basename(pkg)}: removed ${removed} stale file(s) from dist/\n`);

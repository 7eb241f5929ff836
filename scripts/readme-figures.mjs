#!/usr/bin/env node
// The loader's size as README.md and docs/loader.md state it, measured on the build: `pnpm docs:figures`
// rewrites both lines from the bundle that `packages/loader/build.mjs` makes (the same esbuild options
// that write dist/ack.loader.js), and scripts/readme-figures.test.ts fails when they differ.
// Sizes are in KB of 1,000 bytes, to one decimal; "gzipped" is zlib's gzip at level 9.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { bundle } from '../packages/loader/build.mjs';

export const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The files that state the loader's size, and the line in each that does (the figures are what changes). */
export const FIGURE_LINES = [
  {
    file: 'README.md',
    pattern: /\(ack\.loader\.js: [\d.]+ KB minified, [\d.]+ KB gzipped;/,
    line: (f) => `(ack.loader.js: ${f.minified} minified, ${f.gzipped} gzipped;`,
  },
  {
    file: 'docs/loader.md',
    pattern: /^Size: `ack\.loader\.js` is [\d.]+ KB minified, [\d.]+ KB gzipped/m,
    line: (f) => `Size: \`ack.loader.js\` is ${f.minified} minified, ${f.gzipped} gzipped`,
  },
];

const kb = (bytes) => `${(bytes / 1000).toFixed(1)} KB`;

/** Builds the loader's IIFE in memory and measures it: bytes, and the figures as the docs print them. */
export async function measureLoader() {
  const { iife } = await bundle();
  const bytes = Buffer.byteLength(iife.code);
  const gzipBytes = gzipSync(iife.code, { level: 9 }).length;
  return { bytes, gzipBytes, minified: kb(bytes), gzipped: kb(gzipBytes) };
}

/** Each file's text with its size line rewritten from `figures`; throws when a file has no such line. */
export function rewriteFigures(figures, read = (file) => fs.readFileSync(path.join(repo, file), 'utf8')) {
  return FIGURE_LINES.map(({ file, pattern, line }) => {
    const before = read(file);
    if (!pattern.test(before)) throw new Error(`${file}: no loader size line matching ${pattern}`);
    return { file, before, after: before.replace(pattern, line(figures)) };
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const figures = await measureLoader();
  for (const { file, before, after } of rewriteFigures(figures)) {
    if (after !== before) fs.writeFileSync(path.join(repo, file), after);
    console.log(
      `${file}: ack.loader.js ${figures.minified} minified, ${figures.gzipped} gzipped${after === before ? ' (unchanged)' : ''}`,
    );
  }
  console.log(`(${figures.bytes} B, ${figures.gzipBytes} B gzip -9)`);
}

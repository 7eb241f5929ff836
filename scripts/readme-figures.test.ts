import { expect, test } from 'vitest';
import { measureLoader, rewriteFigures } from './readme-figures.mjs';

// README.md and docs/loader.md state the loader's size; the figures must be the build's
// (`pnpm docs:figures` rewrites them).
test("the loader size stated in README.md and docs/loader.md is the build's", async () => {
  const figures = await measureLoader();
  const stale = rewriteFigures(figures)
    .filter(({ before, after }) => before !== after)
    .map(({ file }) => file);
  expect(
    stale,
    `ack.loader.js is ${figures.minified} minified, ${figures.gzipped} gzipped (${figures.bytes} B, ` +
      `${figures.gzipBytes} B gzip -9); these files state other figures: run pnpm docs:figures`,
  ).toEqual([]);
});

import path from 'node:path';
import { defineConfig } from 'vitest/config';

// The tests mutation testing runs (stryker.config.mjs, docs/reliability.md "Mutation testing"):
// in-process tests of the mutated files, over real sockets where the behaviour is HTTP, and none
// that spawn processes. `@ack/host` is resolved to this tree's sources so that a mutant of the host
// is seen by the wwwroot tests that import it.
const here = path.dirname(new URL(import.meta.url).pathname);

// `MUTATION_TESTS` (comma-separated globs) narrows the run to the tests of the one file being
// mutated (`--mutate`), so that a run per file stays affordable (docs/reliability.md).
const only = process.env.MUTATION_TESTS?.split(',')
  .map((glob) => glob.trim())
  .filter(Boolean);

const config = defineConfig({
  resolve: {
    conditions: ['source'],
    alias: [
      { find: /^@ack\/host$/, replacement: path.join(here, 'packages/host/src/index.ts') },
      { find: /^@ack\/host\/test-support$/, replacement: path.join(here, 'packages/host/src/test-support/index.ts') },
    ],
  },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    include: [
      'packages/host/src/paths/*.test.ts',
      'packages/host/src/fs/safe-write*.test.ts',
      'packages/host/src/http/read-body*.test.ts',
      'packages/host/src/keys/safe-equal.test.ts',
      'packages/host/src/contract-sync/contract-sync.test.ts',
      'packages/host/src/contract-sync/host-access*.test.ts',
      'packages/host/src/pipeline/edge/edge.test.ts',
      'packages/host/src/pipeline/edge/*.near-miss.test.ts',
      'packages/host/src/pipeline/edge/cors*.test.ts',
      'packages/host/src/pipeline/edge/cross-site*.test.ts',
      'packages/host/src/pipeline/edge/host-filter*.test.ts',
      'packages/host/src/settings/redact*.test.ts',
      'packages/wwwroot/src/sync/basic-token*.test.ts',
      'packages/wwwroot/src/shared-files/catalog*.test.ts',
      'packages/wwwroot/src/static/static.test.ts',
      'packages/wwwroot/src/serving/conditional*.test.ts',
      'packages/wwwroot/src/serving/range*.test.ts',
      // Seeded fast-check runs of the Range and conditional rules, pure and against a live host.
      'packages/wwwroot/src/serving/ranges.fuzz.test.ts',
      'packages/wwwroot/src/serving/parsers.fuzz.test.ts',
      // Accept-Encoding: which representation a file goes out as.
      'packages/wwwroot/src/serving/compressed.test.ts',
      'packages/wwwroot/src/dev-sign-in/cross-site.test.ts',
      'packages/wwwroot/src/body-limit.test.ts',
      // The sync batch's staging and the listing: in-process, over real sockets.
      'packages/host/src/fs/batch-staging*.test.ts',
      'packages/host/src/fs/temp-owner.test.ts',
      'packages/wwwroot/src/sync/delta.test.ts',
      'packages/wwwroot/src/sync/batch-entries.test.ts',
      'packages/wwwroot/src/sync/listing*.test.ts',
      // The sign-out store and its file: several handles on one file stand for several processes.
      'packages/host/src/sign-in/revocation*.test.ts',
      'packages/host/src/sign-in/token-id-table*.test.ts',
    ],
    // A mutant that makes a request hang fails its test here (killed) rather than running into
    // Stryker's own time-out, which restarts the test runner.
    testTimeout: 5_000,
    hookTimeout: 10_000,
  },
});

if (only?.length && config.test) config.test.include = only;

export default config;

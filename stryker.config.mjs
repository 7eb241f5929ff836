// Mutation testing of the security- and data-critical code (docs/reliability.md "Mutation testing").
// Run with `pnpm test:mutation`. Only the files below are mutated; the tests that run are the fast,
// in-process ones that exercise them (vitest.stryker.config.ts), never the ones that spawn processes.
// One file at a time: `--mutate <file>` with MUTATION_TESTS set to its tests (docs/reliability.md).
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  plugins: ['@stryker-mutator/vitest-runner'],
  vitest: { configFile: 'vitest.stryker.config.ts', related: false },
  mutate: [
    // Contained paths: a path a client names stays inside the folder it is meant for.
    'packages/host/src/paths/contained-path.ts',
    // Safe writes: a file is replaced whole or not at all.
    'packages/host/src/fs/safe-write.ts',
    // Body limits.
    'packages/host/src/http/read-body.ts',
    // Token checks: the sync Basic token, contract sync's hostAccessID, and their one comparison.
    'packages/wwwroot/src/sync/basic-token.ts',
    'packages/host/src/contract-sync/host-access.ts',
    'packages/host/src/keys/safe-equal.ts',
    // AllowedHosts, the WithOrigins matcher and the cross-site guard.
    'packages/host/src/pipeline/edge/host-filter.ts',
    'packages/host/src/pipeline/edge/cors-policy.ts',
    'packages/host/src/pipeline/edge/cross-site.ts',
    // The shared-file catalog's secret rule (secretTargetReason only).
    'packages/wwwroot/src/shared-files/catalog.ts:52-72',
    // Conditional GET and Range.
    'packages/wwwroot/src/serving/conditional.ts',
    'packages/wwwroot/src/serving/send.ts',
    'packages/wwwroot/src/serving/ranges.ts',
    // Redaction of secrets in settings dumps and log lines.
    'packages/host/src/settings/redact.ts',
    // The sync batch's staging (memory bound, flushes, who wrote a temporary file) and the listing.
    'packages/host/src/fs/batch-staging.ts',
    'packages/host/src/fs/temp-owner.ts',
    'packages/wwwroot/src/sync/listing.ts',
    // The sign-out store: a signed-out cookie is refused until it expires.
    'packages/host/src/sign-in/revocations.ts',
    'packages/host/src/sign-in/revocation-file.ts',
    'packages/host/src/sign-in/token-id-table.ts',
  ],
  coverageAnalysis: 'perTest',
  ignoreStatic: true,
  concurrency: 2,
  // Kept between runs (and gitignored): a rerun tests only the mutants whose code or tests changed.
  incremental: true,
  incrementalFile: 'reports/stryker-incremental.json',
  timeoutMS: 30_000,
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
  ignorePatterns: ['bench/.work', 'bench/.work-fault', 'coverage', 'reports', 'examples/**/log', '.ack'],
};

import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// One vitest run covers every package (the `projects` form of vitest 4, which replaced
// vitest.workspace.ts). Tests sit beside the code they test. The `source` export condition makes
// `@ack/*` imports resolve to TypeScript sources, so tests never run against a stale build; the CLI
// tests still run the built `ack` binary, which `pnpm test` builds first.
const pkg = (name: string) => ({
  extends: true as const,
  test: { name, root: `packages/${name}`, include: ['src/**/*.test.ts', 'test/**/*.test.ts'] },
});

export default defineConfig({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    projects: [
      pkg('host'),
      pkg('wwwroot'),
      pkg('loader'),
      pkg('cli'),
      // The release check: packed tarballs installed with npm outside the repository (scripts/).
      { extends: true as const, test: { name: 'release', root: 'scripts', include: ['*.test.ts'] } },
    ],
    // Real MariaDB, PostgreSQL and Redis for the session tests: the usual servers where they answer,
    // else private ones started for the run (scripts/test-databases.mjs).
    globalSetup: [fileURLToPath(new URL('./scripts/test-databases.mjs', import.meta.url))],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Read only with --coverage (`pnpm test:coverage`, docs/reliability.md "Coverage"): the packages'
    // sources, not their tests, test support or the browser bundle's build script.
    coverage: {
      provider: 'v8',
      reporter: ['text-summary', 'json-summary'],
      reportsDirectory: 'coverage',
      include: ['packages/*/src/**/*.ts'],
      exclude: ['**/*.test.ts', '**/test-support/**', '**/test-fixture.ts', '**/*.d.ts'],
      // The figures are written even when a test fails, so that a flaky test does not cost the run.
      reportOnFailure: true,
    },
  },
});

// ESLint (flat config) with typescript-eslint. Rules here catch mistakes a formatter cannot; the
// layout belongs to Prettier (.prettierrc.json), so no stylistic rules are enabled.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      '**/dist/**',
      '**/node_modules/**',
      'coverage/**',
      'bench/.work/**',
      'bench/.work-fault/**',
      'bench/.work-sync/**',
      // Mutation testing's sandboxes and reports (pnpm test:mutation).
      '.stryker-tmp/**',
      'reports/**',
      'examples/**/lib/**',
      '**/*.d.mts',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: 'module',
      globals: { ...globals.node },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      // `_name` marks a parameter or binding kept on purpose (a handler's fixed signature, a rest split).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      'no-restricted-syntax': [
        'error',
        {
          // One declared request type replaced these; a new one hides a type error (CONTRIBUTING.md).
          selector: 'TSAsExpression > TSAsExpression[typeAnnotation.type="TSUnknownKeyword"]',
          message:
            'No `as unknown as` casts: give the value a real type (req.ack and req.ackUser are declared on Request).',
        },
        {
          selector: 'TSAsExpression > TSNeverKeyword',
          message:
            'No `as never` casts: use the adapter in packages/host/src/pipeline/express-adapter.ts or a real type.',
        },
      ],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      // Control characters in patterns are deliberate here: log lines, cookies and user IDs are
      // cleaned of them (log forging, header injection).
      'no-control-regex': 'off',
      'no-console': 'off',
    },
  },
  {
    files: ['**/*.test.ts'],
    // Tests may reach into objects and JSON answers to observe behaviour.
    rules: { 'no-restricted-syntax': 'off', '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Code that runs in the browser: the loader and the example screens' scripts.
    files: ['packages/loader/src/**', 'examples/**/*.js'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    // Type-aware rules for the packages' sources (not tests): a promise nobody awaits loses its
    // error (an unhandled rejection ends the process) and its ordering, and an async function passed
    // where a plain callback is expected has its rejection dropped. Tests are type-checked by
    // `pnpm typecheck:tests` instead.
    files: ['packages/*/src/**/*.ts'],
    ignores: ['**/*.test.ts', 'packages/loader/src/test-support/**'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: path.dirname(fileURLToPath(import.meta.url)) },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
);

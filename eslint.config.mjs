// Lint: typescript-eslint's type-checked recommended rules everywhere, and workflow code kept deterministic.
import { builtinModules } from 'node:module';
import tseslint from 'typescript-eslint';

// Every Node built-in, bare and with the node: prefix, from Node itself rather than a hand-kept list.
const nodeBuiltins = builtinModules.flatMap((m) => (m.startsWith('node:') ? [m] : [m, `node:${m}`]));

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', '.data/**', '*.config.js', '*.config.mjs', 'scripts/**', 'console/src/openapi.d.ts'] },
  {
    files: ['**/*.ts', 'console/**/*.tsx'],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      'no-restricted-properties': ['error', { object: 'process', property: 'env', message: 'read configuration once, in service/config.ts' }],
    },
  },
  {
    files: ['service/config.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    rules: { 'no-restricted-properties': 'off' },
  },
  {
    // Workflows are replayed: no I/O, no engines' clients, no Node built-ins; activities are known by their types only.
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [...nodeBuiltins, 'nats', '@clickhouse/client', 'chdb', 'koa', '@koa/router', '@temporalio/client', '@temporalio/worker', '@temporalio/activity'],
          patterns: [
            { group: ['../workers/*', '../workers/**'], allowTypeImports: true, message: 'workflows take only types from workers/' },
            { group: ['../storage/*', '../streams/*', '../api/*', '../application/*', '../service/*', '../engines/*', '../temporal/*', '../observability/*'], message: 'workflows import only the workflow SDK, core and their own folder' },
          ],
        },
      ],
      'no-restricted-globals': ['error', { name: 'setTimeout', message: 'use sleep() from @temporalio/workflow' }, { name: 'fetch', message: 'fetch is I/O: use an activity' }],
    },
  },
);

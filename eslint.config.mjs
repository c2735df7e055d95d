// Lint: type-aware rules everywhere, and workflow code kept deterministic.
import tseslint from 'typescript-eslint';

const nodeBuiltins = ['fs', 'path', 'os', 'crypto', 'http', 'https', 'net', 'child_process', 'stream', 'zlib', 'timers', 'worker_threads', 'dns', 'url', 'util'];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', '.data/**', '*.config.js', 'scripts/**'] },
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.base],
    languageOptions: { parserOptions: { project: './tsconfig.json', tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      'no-restricted-properties': ['error', { object: 'process', property: 'env', message: 'read configuration once, in service/config.ts' }],
    },
  },
  {
    files: ['service/main.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    rules: { 'no-restricted-properties': 'off' },
  },
  {
    // Workflows are replayed: no I/O, no engines' clients, no Node built-ins.
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [...nodeBuiltins, ...nodeBuiltins.map((m) => `node:${m}`), 'nats', '@clickhouse/client', 'chdb', 'koa', '@koa/router', '@temporalio/client', '@temporalio/worker', '@temporalio/activity'],
          patterns: [{ group: ['../storage/*', '../streams/*', '../api/*', '../service/*', '../engines/*'], message: 'workflows import activities as types only' }],
        },
      ],
      'no-restricted-globals': ['error', { name: 'setTimeout', message: 'use sleep() from @temporalio/workflow' }, { name: 'fetch', message: 'fetch is I/O: use an activity' }],
    },
  },
);

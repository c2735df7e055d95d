/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' } }] },
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  testTimeout: 120000,
  maxWorkers: 2,
  // Integration files start stacks in the worker's own process, chDB's native engine among them (one data folder a
  // process, but its threads and caches outlive a session): every worker is replaced after each file (any worker is
  // past 1 MB), so no file runs on what an earlier one left. Two full runs of 2026-11-29 saw stream-resilience's worker
  // stop consuming only after other files in its process; the same file alone, or after the files suspected, passed.
  workerIdleMemoryLimit: '1MB',
  verbose: true,
};

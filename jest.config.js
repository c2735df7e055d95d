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
  // Integration files start stacks in the worker's own process: a worker past this is replaced after its file, so one file's leftovers never starve the next.
  workerIdleMemoryLimit: '1.5GB',
  verbose: true,
};

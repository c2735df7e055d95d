/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // The cluster tests are CI's second command (`npm run test:cluster`, jest.cluster.config.js).
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/cluster/'],
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' } }] },
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  testTimeout: 120000,
  maxWorkers: 2,
  // Integration files start stacks in the worker's own process, and chDB binds one data folder a process: a file whose
  // stack fails to stop leaves its session open, and every later file in that process failed (nine files in one run
  // of 2026-11-29). Every worker is replaced after each file (any worker is past 1 MB), so no file runs on what an
  // earlier one left; the run is no slower for it (a fresh process starts leaner than one that hosted many stacks).
  workerIdleMemoryLimit: '1MB',
  verbose: true,
};

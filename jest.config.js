/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: '<rootDir>/test/setup/environment.cjs',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] },
  globalSetup: '<rootDir>/test/setup/global-setup.ts',
  globalTeardown: '<rootDir>/test/setup/global-teardown.ts',
  setupFiles: ['<rootDir>/test/setup/env.ts'],
  testTimeout: 120000,
  maxWorkers: 2,
};

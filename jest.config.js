/**
 * Two projects: `unit` (pure logic, no emulators: `npm run test:unit`, seconds) and `integration`
 * (everything else, on the embedded stack its global setup starts once and always stops). `jest` runs
 * both, each test once; a project's global setup runs only when one of its tests does.
 */
const common = {
  // Workers exit when their parent goes away (an interrupted run leaves no worker or emulator).
  testEnvironment: '<rootDir>/test/setup/environment.cjs',
  transform: { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] },
  setupFiles: ['<rootDir>/test/setup/env.ts'],
};

/** @type {import('jest').Config} */
module.exports = {
  // Global options (a project's own testTimeout would be ignored).
  maxWorkers: 2,
  testTimeout: 120000,
  projects: [
    { ...common, displayName: 'unit', roots: ['<rootDir>/test/unit'], testMatch: ['**/*.test.ts'] },
    {
      ...common,
      displayName: 'integration',
      roots: ['<rootDir>/test'],
      testMatch: ['**/*.test.ts'],
      testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/unit/'],
      globalSetup: '<rootDir>/test/setup/global-setup.ts',
      globalTeardown: '<rootDir>/test/setup/global-teardown.ts',
    },
  ],
};

/**
 * Two projects: `unit` (every suite that needs no emulator: pure logic, and the CDK synth tests of
 * test/infra; `npm run test:unit`) and `integration` (everything on the embedded stack its global
 * setup starts once and always stops). `jest` runs both, each test once; a project's global setup
 * runs only when one of its tests does, so a run of unit suites alone starts no emulator.
 */
/** test/infra suites that talk to the emulators (the rest of test/infra synthesizes only). */
const INFRA_ON_STACK = ['local-runner'];
const infraOnStack = `<rootDir>/test/infra/(${INFRA_ON_STACK.join('|')})\\.test\\.ts$`;
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
    {
      ...common,
      displayName: 'unit',
      roots: ['<rootDir>/test/unit', '<rootDir>/test/infra'],
      testMatch: ['**/*.test.ts'],
      testPathIgnorePatterns: ['/node_modules/', infraOnStack],
    },
    {
      ...common,
      displayName: 'integration',
      roots: ['<rootDir>/test'],
      testMatch: ['**/*.test.ts'],
      // Everything the unit project does not run: test/unit, and test/infra but its on-stack suites.
      testPathIgnorePatterns: [
        '/node_modules/',
        '<rootDir>/test/unit/',
        `<rootDir>/test/infra/(?!(${INFRA_ON_STACK.join('|')})\\.test\\.ts$)`,
      ],
      globalSetup: '<rootDir>/test/setup/global-setup.ts',
      globalTeardown: '<rootDir>/test/setup/global-teardown.ts',
    },
  ],
};

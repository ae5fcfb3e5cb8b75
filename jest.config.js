// Three tiers, named by file suffix: *.spec.ts (pure), *.int.spec.ts (real Postgres + nats-server),
// *.e2e.spec.ts (the services running as processes). `npm test` runs all three.
const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
      target: 'es2022',
    },
    module: { type: 'commonjs' },
    sourceMaps: 'inline',
  },
];
const moduleNameMapper = {
  // A library's second entry (e.g. `@ratchet/adapters/operator`) is its src/<entry>.ts.
  '^@ratchet/adapters/operator$': '<rootDir>/libs/adapters/src/operator.ts',
  '^@ratchet/([a-z-]+)$': '<rootDir>/libs/$1/src/index.ts',
};
const common = {
  rootDir: __dirname,
  transform: { '^.+\\.ts$': swc },
  moduleNameMapper,
  testEnvironment: 'node',
  modulePathIgnorePatterns: ['<rootDir>/.*/dist/'],
};
module.exports = {
  // A test that failed half-way may leave a child service's pipes open; the run must still end (CI has a
  // time limit) — the failure is reported either way.
  forceExit: true,
  reporters: ['default', '<rootDir>/test/jest/summary-reporter.js'],
  projects: [
    {
      ...common,
      displayName: 'unit',
      testMatch: ['<rootDir>/{apps,libs,test}/**/*.spec.ts'],
      testPathIgnorePatterns: ['\\.int\\.spec\\.ts$', '\\.e2e\\.spec\\.ts$', '/node_modules/'],
    },
    {
      ...common,
      displayName: 'int',
      testMatch: ['<rootDir>/{apps,libs,test}/**/*.int.spec.ts'],
      globalSetup: '<rootDir>/libs/testing/src/global-setup.ts',
      globalTeardown: '<rootDir>/libs/testing/src/global-teardown.ts',
      setupFilesAfterEnv: ['<rootDir>/test/jest/int.setup.ts'],
    },
    {
      ...common,
      displayName: 'e2e',
      testMatch: ['<rootDir>/{apps,libs,test}/**/*.e2e.spec.ts'],
      globalSetup: '<rootDir>/libs/testing/src/global-setup.ts',
      globalTeardown: '<rootDir>/libs/testing/src/global-teardown.ts',
      setupFilesAfterEnv: ['<rootDir>/test/jest/e2e.setup.ts'],
    },
  ],
};

/**
 * Jest projects: `unit` needs no Redis and runs in seconds (`npm run test:unit`); the others start a
 * private redis-server (or whole app processes) each. `npx jest` / `npm test` runs every project.
 * The conformance suite (test/conformance) is one file set run on both backends: the unit project
 * runs it on the in-memory engine, the conformance project on Redis.
 */
const base = {
  testEnvironment: 'node',
  rootDir: __dirname,
  transform: {
    // Type-checking is `npm run typecheck`'s job; tsconfig.jest.json sets isolatedModules so ts-jest only transpiles.
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.jest.json' }],
  },
  moduleFileExtensions: ['ts', 'js', 'json'],
  moduleNameMapper: {
    '^@sundial/(core|redis|client)$': '<rootDir>/libs/$1/src',
    '^@sundial/(core|redis|client)/(.*)$': '<rootDir>/libs/$1/src/$2',
  },
};

/** Specs under libs/ that start a redis-server: they run with the Redis suites, not as unit tests. */
const LIB_SPECS_ON_REDIS = [
  '<rootDir>/libs/redis/src/scripts.spec.ts',
  '<rootDir>/libs/client/src/sundial.module.spec.ts',
];

/** @type {import('jest').Config} */
module.exports = {
  testTimeout: 30000,
  projects: [
    {
      ...base,
      displayName: 'unit',
      testMatch: [
        '<rootDir>/{libs,apps,bench}/**/*.spec.ts',
        '<rootDir>/test/engine/**/*.test.ts',
        '<rootDir>/test/conformance/**/*.test.ts',
      ],
      testPathIgnorePatterns: ['/node_modules/', ...LIB_SPECS_ON_REDIS],
      globals: { SUNDIAL_BACKENDS: 'memory' },
    },
    {
      ...base,
      displayName: 'conformance',
      testMatch: ['<rootDir>/test/conformance/**/*.test.ts'],
      globals: { SUNDIAL_BACKENDS: 'redis' },
    },
    {
      ...base,
      displayName: 'redis',
      testMatch: ['<rootDir>/test/{redis,support}/**/*.test.ts', ...LIB_SPECS_ON_REDIS],
    },
    { ...base, displayName: 'api', testMatch: ['<rootDir>/test/api/**/*.test.ts'] },
    { ...base, displayName: 'cluster', testMatch: ['<rootDir>/test/cluster/**/*.test.ts'] },
  ],
};

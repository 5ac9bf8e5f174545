const { pathsToModuleNameMapper } = require('ts-jest');
// The `@sundial/*` aliases are written once, in tsconfig.json; jest, tsc and register-paths read them there.
const { compilerOptions } = require('./tsconfig.json');

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  rootDir: '.',
  roots: ['<rootDir>/libs', '<rootDir>/apps', '<rootDir>/test', '<rootDir>/bench'],
  testMatch: ['**/*.spec.ts', '**/*.test.ts'],
  transform: {
    // Type-checking is `npm run typecheck`'s job; tsconfig.jest.json sets isolatedModules so ts-jest only transpiles.
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.jest.json' }],
  },
  moduleFileExtensions: ['ts', 'js', 'json'],
  moduleNameMapper: pathsToModuleNameMapper(compilerOptions.paths, { prefix: '<rootDir>/' }),
  testTimeout: 30000,
};

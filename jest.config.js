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
  moduleNameMapper: {
    '^@sundial/(core|redis|client)$': '<rootDir>/libs/$1/src',
    '^@sundial/(core|redis|client)/(.*)$': '<rootDir>/libs/$1/src/$2',
  },
  testTimeout: 30000,
};

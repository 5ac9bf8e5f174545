const { availableParallelism } = require('node:os');
const { join } = require('node:path');
const { pathsToModuleNameMapper } = require('ts-jest');
// The `@sundial/*` aliases are written once, in tsconfig.json; jest, tsc and register-paths read them there.
const { compilerOptions } = require('./tsconfig.json');

/**
 * Jest projects: `unit` needs no Redis and runs in seconds (`npm run test:unit`); the others start a
 * private redis-server (or whole app processes, or Prometheus) each. `npm test` runs every project.
 * The conformance suite (test/conformance) is one file set run on both backends: the unit project
 * runs it on the in-memory engine, the conformance project on Redis.
 */
const base = {
  // jest's node environment, reporting what keeps a worker up after the run (test/environment.js)
  testEnvironment: '<rootDir>/test/environment.js',
  rootDir: __dirname,
  transform: {
    // Type-checking is `npm run typecheck`'s job; tsconfig.jest.json sets isolatedModules so ts-jest only
    // transpiles, into one cache for all the projects (test/ts-transform.js).
    '^.+\\.ts$': ['<rootDir>/test/ts-transform.js', { tsconfig: 'tsconfig.jest.json' }],
  },
  moduleFileExtensions: ['ts', 'js', 'json'],
  moduleNameMapper: pathsToModuleNameMapper(compilerOptions.paths, { prefix: '<rootDir>/' }),
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  // dist/libs/<lib>/src carries a copy of libs/<lib>/package.json (README "Add it to your app"): two
  // packages of one name would stop jest's module map; tests reach dist only through child processes.
  modulePathIgnorePatterns: ['<rootDir>/dist/'],
};

/** Specs under libs/ that start a redis-server: they run with the Redis suites, not as unit tests. */
const LIB_SPECS_ON_REDIS = [
  '<rootDir>/libs/redis/src/store/script-loader.spec.ts',
  '<rootDir>/libs/redis/src/fire/claim-rides.spec.ts',
  '<rootDir>/libs/client/src/sundial.module.spec.ts',
  '<rootDir>/libs/client/src/module-options.spec.ts',
  '<rootDir>/libs/client/src/cron/cron-registrar.spec.ts',
  '<rootDir>/libs/client/src/cron/distributed-interval.spec.ts',
  '<rootDir>/libs/client/src/worker/sundial-worker.module.spec.ts',
  '<rootDir>/libs/client/src/worker/data-watch.spec.ts',
  '<rootDir>/libs/client/src/worker/shared-connection.spec.ts',
  '<rootDir>/libs/client/src/worker/worker-async.spec.ts',
  '<rootDir>/libs/client/src/health/sundial-health.indicator.spec.ts',
  '<rootDir>/libs/testing/src/redis-server.test.ts',
  '<rootDir>/libs/server/src/redis-ping.spec.ts',
];

/**
 * Node's compile cache (V8 code cache, keyed by each file's content and Node's version) for every Node
 * process the run starts: the jest workers (replaced after a suite past workerIdleMemoryLimit, each
 * loading jest, ts-jest's runtime and the harness again) and every app, CLI and script the suites spawn
 * with process.env. An app's start is mostly module loading (~1,050 CommonJS and ~980 ES modules):
 * cached, it took ~15 % less CPU. Outside the checkout's sources, in node_modules/.cache (npm ci starts it
 * empty); the apps write it after they listen (libs/server/src/serve.ts), since most suites end them with
 * SIGKILL, before Node's own write at exit. A NODE_COMPILE_CACHE already set, or
 * NODE_DISABLE_COMPILE_CACHE, is kept.
 */
process.env.NODE_COMPILE_CACHE ??= join(__dirname, 'node_modules', '.cache', 'node-compile-cache');

/** @type {import('jest').Config} */
module.exports = {
  testTimeout: 30000,
  // Most suites spend their time waiting, not computing: on real time (leases, cron seconds, outages)
  // and on child processes (redis-server, the apps, Prometheus, Chromium). Jest's default (cores - 1)
  // is one suite at a time on a 2-core CI host, with a core idle; four run side by side there. With
  // two, the cores were busy ~1.4 of 2 on average (user + sys over the run's wall) and the whole run
  // took 816 s on an idle 2-core host; with three, 675 s, every suite passing (docs/design.md). With
  // more suites since, three took 840 s and then 934 s in two clean-clone runs of 12-07 (past the
  // 900 s bound: the host's pace moved every suite); four, right after, 858 s (jest 771 against 835),
  // every suite passing: each suite is slower beside three others, the wall shorter.
  maxWorkers: Math.max(4, availableParallelism() - 1),
  // Without recorded durations (CI's clean clone), the long process suites start first: test/sequencer.js.
  testSequencer: '<rootDir>/test/sequencer.js',
  // How long jest waits for a worker to end before it kills it and says it "failed to exit gracefully".
  // Jest's 500 ms also times the worker's exit, which frees its memory (470-730 MB RSS after the unit
  // project): 240-1500 ms on 2 loaded cores with nothing left running (docs/design.md "Jest workers'
  // exit"). A worker that is still held up names what holds it after 500 ms (test/environment.js).
  workerGracefulExitTimeout: 5000,
  // A worker keeps every suite's sandbox (--experimental-vm-modules, jestjs/jest#14605): ~1.2 GB RSS
  // after the unit and redis projects, whose exit took 2.7-3 s. Past this heap it is replaced after
  // its suite (docs/design.md "Jest workers' exit").
  workerIdleMemoryLimit: '512MB',
  projects: [
    {
      ...base,
      displayName: 'unit',
      testMatch: [
        '<rootDir>/{libs,apps,bench,examples}/**/*.spec.ts',
        '<rootDir>/test/engine/**/*.test.ts',
        '<rootDir>/test/conformance/**/*.test.ts',
        '<rootDir>/test/environment.test.ts',
      ],
      testPathIgnorePatterns: [...base.testPathIgnorePatterns, ...LIB_SPECS_ON_REDIS],
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
      testMatch: ['<rootDir>/test/redis/**/*.test.ts', ...LIB_SPECS_ON_REDIS],
    },
    { ...base, displayName: 'api', testMatch: ['<rootDir>/test/{api,client}/**/*.test.ts'] },
    {
      ...base,
      displayName: 'cluster',
      // examples/*/test/*.test.ts run an example app's replicas as child processes
      testMatch: ['<rootDir>/test/cluster/**/*.test.ts', '<rootDir>/examples/**/*.test.ts'],
    },
    { ...base, displayName: 'deploy', testMatch: ['<rootDir>/test/deploy/**/*.test.ts'] },
    // The operator tools against a running cluster: the `sundial` CLI (the built binary) and the UI in
    // Debian's chromium, driven by playwright-core.
    { ...base, displayName: 'operator', testMatch: ['<rootDir>/test/{cli,ui}/**/*.test.ts'] },
    // The fast subset of the chaos suite (test/chaos/chaos.test.ts, under a minute); `npm run chaos`
    // (test/chaos/run.ts) runs every scenario.
    { ...base, displayName: 'chaos', testMatch: ['<rootDir>/test/chaos/**/*.test.ts'] },
  ],
};

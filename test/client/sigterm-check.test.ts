import { type AppProcess, spawnApp, waitFor } from '@sundial/testing/harness';
import { useAppsOnPrivateRedis } from '../cluster/app-fixture';

const WARNING = 'SundialWorkerModule: nothing in this process handles SIGTERM';

/**
 * docs/spec.md §5.1: an app whose SundialWorkerModule takes fire jobs while nothing in the process listens
 * for SIGTERM (no `app.enableShutdownHooks()`) says so once, a few seconds after its start; one with the
 * hooks, one under a test runner (NODE_ENV=test), and the standalone apps (their own signal handling)
 * say nothing.
 */
describe('SundialWorkerModule without a SIGTERM listener', () => {
  const { redis, apps } = useAppsOnPrivateRedis();

  const spawn = async (
    app: Parameters<typeof spawnApp>[0],
    name: string,
    env: Record<string, string> = {},
  ): Promise<AppProcess> => {
    // As deployed: jest's NODE_ENV=test, which the children inherit, turns the check off.
    const started = await spawnApp(app, name, { REDIS_URL: redis().url, NODE_ENV: 'production', ...env });
    apps.push(started);
    return started;
  };

  const warnings = (app: AppProcess): string[] => app.lines.filter((line) => line.includes(WARNING));

  it('warns once without enableShutdownHooks(); not with it, nor under a test runner, nor in the standalone worker and scheduler', async () => {
    // The stock apps on their own prefix, apart from the fixture's timers.
    const stock = { SUNDIAL_PREFIX: 'stock' };
    const quiet = await Promise.all([
      spawn('test/fixtures/fastify', 'with-hooks'),
      // an e2e test of the app: no SIGTERM comes under a test runner
      spawn('test/fixtures/fastify', 'under-test', { FIXTURE_SHUTDOWN_HOOKS: 'off', NODE_ENV: 'test' }),
      spawn('worker', 'worker', stock),
      spawn('scheduler', 'scheduler', stock),
    ]);
    // Started after the others were ready: once its check has run, theirs have too.
    const bare = await spawn('test/fixtures/fastify', 'without-hooks', { FIXTURE_SHUTDOWN_HOOKS: 'off' });
    await waitFor(() => warnings(bare).length > 0, {
      what: 'the warn line of the app without shutdown hooks',
      timeoutMs: 30_000, // deadline: the check runs 5 s after the start, later on a loaded host
    });
    expect(warnings(bare).map((line) => JSON.parse(line) as Record<string, unknown>)).toEqual([
      {
        level: 'warn',
        context: 'Sundial',
        msg: expect.stringContaining(
          'runs in progress are cut off and wait out their lease (at-least-once: run again after leaseMs; at-most-once: recorded lost)',
        ),
        fix: 'Call app.enableShutdownHooks() in main.ts before app.listen()',
        workerId: expect.any(String),
      },
    ]);
    expect(quiet.map((app) => ({ app: app.name, warnings: warnings(app) }))).toEqual(
      quiet.map((app) => ({ app: app.name, warnings: [] })),
    );
  }, 120_000);
});

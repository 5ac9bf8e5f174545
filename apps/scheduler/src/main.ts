import '../../../libs/server/src/register-paths';
import { exitStartFailed } from '../../../libs/server/src/start-fatal';
import { schedulerConfigFromEnv } from './scheduler-config';

// The whole environment first, read and checked by narrow modules: a refused start (a bad ConfigMap)
// writes its fatal line and exits before Nest, BullMQ and ioredis load (test/deploy/bad-env.test.ts).
// Then tracing, before anything loads Nest, Express or `http` (tracing.ts); then the app.
(async () => {
  const config = schedulerConfigFromEnv();
  await import('./tracing');
  const [{ serve }, { createRedisSchedulerService }, { createSchedulerApp }] = await Promise.all([
    import('@sundial/server'),
    import('./redis-scheduler-service'),
    import('./scheduler-app'),
  ]);
  serve('scheduler', async () => ({
    config,
    app: await createSchedulerApp(config, createRedisSchedulerService),
    shutdownDeadlineMs: 15_000,
  }));
})().catch((error: unknown) => exitStartFailed('scheduler', error));

import '../../../libs/server/src/register-paths';
import { exitStartFailed } from '../../../libs/server/src/start-fatal';
import { loadHandlersModule } from './handlers-module';
import { HAND_BACK_MS, workerConfigFromEnv } from './worker-config';

// The whole environment first, read and checked by narrow modules: a refused start (a bad ConfigMap)
// writes its fatal line and exits before Nest, BullMQ and ioredis load (test/deploy/bad-env.test.ts).
// Then tracing, before anything loads Nest, Express or `http` (tracing.ts), the handlers module included;
// then that module, which a refusal stops before the app loads too; then the app.
(async () => {
  const config = workerConfigFromEnv();
  await import('./tracing');
  const handlers = config.handlersModule ? await loadHandlersModule(config.handlersModule) : {};
  const [{ serve }, { createWorkerApp }] = await Promise.all([
    import('@sundial/server'),
    import('./worker-app'),
  ]);
  serve('worker', async () => ({
    config,
    app: await createWorkerApp(config, handlers),
    // Past the grace period the runner aborts and hands back its runs: that takes seconds, not more.
    shutdownDeadlineMs: config.shutdownGraceMs + HAND_BACK_MS,
  }));
})().catch((error: unknown) => exitStartFailed('worker', error));

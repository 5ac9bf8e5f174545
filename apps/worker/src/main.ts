import '../../../libs/server/src/register-paths';
import './tracing';
import { serve } from '@sundial/server';
import { createWorkerApp } from './worker-app';
import { workerConfigFromEnv } from './worker-config';

serve('worker', async () => {
  const config = workerConfigFromEnv();
  const app = await createWorkerApp(config);
  // Past the grace period the runner aborts and hands back its runs: that takes seconds, not more.
  return { config, app, shutdownDeadlineMs: config.shutdownGraceMs + 15_000 };
});

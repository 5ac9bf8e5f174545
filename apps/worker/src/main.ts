import '../../../libs/server/src/register-paths';
import './tracing';
import { serve } from '@sundial/server';
import { createWorkerApp } from './worker-app';
import { HAND_BACK_MS, workerConfigFromEnv } from './worker-config';

serve('worker', async () => {
  const config = workerConfigFromEnv();
  const app = await createWorkerApp(config);
  // Past the grace period the runner aborts and hands back its runs: that takes seconds, not more.
  return { config, app, shutdownDeadlineMs: config.shutdownGraceMs + HAND_BACK_MS };
});

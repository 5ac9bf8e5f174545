import '../../shared/src/register-paths';
import { serve } from '../../shared/src/serve';
import { createRedisRunner } from './redis-runner';
import { createWorkerApp } from './worker-app';
import { workerConfigFromEnv } from './worker-config';

serve('worker', async () => {
  const config = workerConfigFromEnv();
  return { config, app: await createWorkerApp(config, createRedisRunner) };
});

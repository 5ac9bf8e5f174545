import '../../shared/src/register-paths';
import { serve } from '../../shared/src/serve';
import { createRedisBackend } from './redis-backend';
import { createSchedulerApp } from './scheduler-app';
import { schedulerConfigFromEnv } from './scheduler-config';

serve('scheduler', async () => {
  const config = schedulerConfigFromEnv();
  return { config, app: await createSchedulerApp(config, createRedisBackend), shutdownDeadlineMs: 15_000 };
});

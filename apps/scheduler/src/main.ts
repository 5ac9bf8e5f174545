import '../../../libs/server/src/register-paths';
import './tracing';
import { serve } from '@sundial/server';
import { createRedisSchedulerService } from './redis-scheduler-service';
import { createSchedulerApp } from './scheduler-app';
import { schedulerConfigFromEnv } from './scheduler-config';

serve('scheduler', async () => {
  const config = schedulerConfigFromEnv();
  return {
    config,
    app: await createSchedulerApp(config, createRedisSchedulerService),
    shutdownDeadlineMs: 15_000,
  };
});

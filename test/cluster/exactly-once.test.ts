import { startRedis } from '@sundial/testing/harness';
import { describeExactlyOnce } from './exactly-once';

describeExactlyOnce({
  name: 'one Redis',
  partitions: 2,
  async start() {
    const redis = await startRedis();
    // Runs are recorded in database 1 of the same private Redis (the apps use database 0).
    return { url: redis.url, recordUrl: `${redis.url}/1`, stop: () => redis.stop() };
  },
});

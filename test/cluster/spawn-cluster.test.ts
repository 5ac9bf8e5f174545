import {
  clusterEnv,
  ensureBuilt,
  type RedisServer,
  spawnCluster,
  startRedis,
} from '@sundial/testing/harness';
import { Redis } from 'ioredis';
import { readdirSync, readFileSync } from 'node:fs';

/** The app processes (dist/apps/<app>) this jest worker has as children. */
function appChildren(): string[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((pid) => {
      try {
        const parent = /^PPid:\s+(\d+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
        const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
        return Number(parent) === process.pid && /apps\/(scheduler|worker)\//.test(command) ? [command] : [];
      } catch {
        return []; // ended meanwhile
      }
    });
}

/**
 * The harness's spawnCluster (libs/testing/src/process-cluster.ts): when one app fails to start, the
 * ones that started are stopped before it throws. The suite gets no cluster to stop, and they ran on,
 * serving its Redis, until the jest worker ended.
 */
describe('spawnCluster when one app fails to start', () => {
  let redis: RedisServer | undefined;
  // deadline: a build when dist is older than a source
  beforeAll(async () => void ([redis] = await Promise.all([startRedis(), ensureBuilt()])), 180_000);
  afterAll(() => redis?.stop());

  it('stops the scheduler that started, and throws the worker’s failure', async () => {
    // the worker refuses a handlers module that does not load; the scheduler reads none and starts
    const env = clusterEnv(redis!.url, { SUNDIAL_HANDLERS_MODULE: '/nonexistent/handlers.js' });
    const failure = await spawnCluster(env, 1, 1).then(
      () => undefined,
      (error: Error) => error,
    );
    expect(failure?.message).toMatch(/^worker-0 exited at start[\s\S]*SUNDIAL_HANDLERS_MODULE/);
    expect(appChildren()).toEqual([]);
    // the scheduler had started: it wrote its data marker (libs/redis infra/data-marker.ts)
    const raw = new Redis(redis!.url);
    expect(await raw.keys('sundial:*').finally(() => raw.disconnect())).not.toEqual([]);
  });
});

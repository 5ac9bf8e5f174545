import { clusterEnv, ensureBuilt, killAll, spawnCluster, startRedis } from '@sundial/testing';
import { type Run, runCli } from './run-cli';

/** `sundial <args>` against the suite's cluster, with `env` over SUNDIAL_URL and SUNDIAL_TOKEN when given. */
export type Sundial = (args: string[], env?: Record<string, string>) => Promise<Run>;

/**
 * For a describe block: a private Redis, one scheduler with the API token `token` and one worker, as
 * child processes, started before its tests and stopped after them; the function it returns runs the CLI against them.
 */
export function withCliCluster(token: string): Sundial {
  let url = '';
  let stop = async () => {};
  beforeAll(async () => {
    const [redis] = await Promise.all([startRedis(), ensureBuilt()]);
    stop = () => redis.stop();
    const apps = await spawnCluster(clusterEnv(redis.url, { SUNDIAL_API_TOKEN: token }), 1, 1);
    stop = async () => {
      await killAll([...apps.schedulers, ...apps.workers]);
      await redis.stop();
    };
    url = apps.schedulers[0].url;
  }, 180_000); // deadline: a build when dist is missing, and the apps' start
  afterAll(() => stop());
  return (args, env = {}) => runCli(args, { SUNDIAL_URL: url, SUNDIAL_TOKEN: token, ...env });
}

import { clusterEnv, ensureBuilt, killAll, spawnCluster, startRedis } from '@sundial/testing/harness';
import { type Run, runCli } from './run-cli';

/** `sundial <args>` against the suite's cluster, with `env` over SUNDIAL_URL and SUNDIAL_TOKEN when given. */
export type Sundial = (args: string[], env?: Record<string, string>) => Promise<Run>;

/**
 * Sundial, and the scheduler's root and API token for a test that calls the API itself (no CLI to
 * start first).
 */
export type CliCluster = Sundial & { url(): string; readonly token: string };

/**
 * For a describe block: a private Redis, one scheduler with the API token `token` and one worker, as
 * child processes, started before its tests and stopped after them (their environment with
 * `appsEnv` over it); the function it returns runs the CLI against them.
 */
export function withCliCluster(token: string, appsEnv: Record<string, string> = {}): CliCluster {
  let url = '';
  let stop = async () => {};
  beforeAll(async () => {
    const [redis] = await Promise.all([startRedis(), ensureBuilt()]);
    stop = () => redis.stop();
    const apps = await spawnCluster(clusterEnv(redis.url, { SUNDIAL_API_TOKEN: token, ...appsEnv }), 1, 1);
    stop = async () => {
      await killAll([...apps.schedulers, ...apps.workers]);
      await redis.stop();
    };
    url = apps.schedulers[0].url;
  }, 180_000); // deadline: a build when dist is missing, and the apps' start
  afterAll(() => stop());
  const sundial: Sundial = (args, env = {}) =>
    runCli(args, { SUNDIAL_URL: url, SUNDIAL_TOKEN: token, ...env });
  return Object.assign(sundial, { url: () => url, token });
}

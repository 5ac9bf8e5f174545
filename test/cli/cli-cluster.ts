import type { Timer } from '@sundial/core';
import {
  clusterEnv,
  ensureBuilt,
  httpClient,
  keyPath,
  killAll,
  spawnCluster,
  startRedis,
} from '@sundial/testing/harness';
import { type Run, runCli } from './run-cli';

/** `sundial <args>` against the suite's cluster, with `env` over SUNDIAL_URL and SUNDIAL_TOKEN when given. */
export type Sundial = (args: string[], env?: Record<string, string>) => Promise<Run>;

/**
 * Sundial, and the scheduler's root and API token for a test that calls the API itself (no CLI to
 * start first).
 */
export type CliCluster = Sundial & {
  url(): string;
  readonly token: string;
  /**
   * The status of the timer under `key` (undefined: none), from the API over HTTP: what a wait polls
   * before the case reads the timer with the CLI. Polled with `sundial get`, each poll was a node
   * process (~0.04 s of CPU): 68 of the 201 the suite started, for nothing the case asserted.
   */
  statusOf(key: string): Promise<string | undefined>;
};

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
  const statusOf = async (key: string) => {
    const reply = await httpClient(url, { authorization: `Bearer ${token}` })<Timer>('GET', keyPath(key));
    return reply.status === 200 ? reply.body.status : undefined;
  };
  return Object.assign(sundial, { url: () => url, token, statusOf });
}

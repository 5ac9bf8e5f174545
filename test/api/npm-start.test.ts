import { join } from 'node:path';
import {
  DIST,
  ensureBuilt,
  freePort,
  httpClient,
  type RedisCluster,
  spawnOwned,
  startRedisCluster,
  waitFor,
} from '@sundial/testing';

/**
 * Issue 12 §3: `npm start` (dist/scripts/start.js) reads REDIS_URL with the apps' own parser, so a
 * Redis Cluster URL gets a scheduler and a worker that are ready — it used to PING it with a plain
 * `new Redis(url)`, which cannot read `redis+cluster://`, and then tried to start a redis-server there.
 */
describe('npm start on a Redis Cluster URL', () => {
  let cluster: RedisCluster;

  beforeAll(async () => {
    [cluster] = await Promise.all([startRedisCluster(3), ensureBuilt()]);
  }, 180_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  it('starts a scheduler and a worker that are ready, and stops them on SIGINT', async () => {
    const [port, workerPort] = [await freePort(), await freePort()];
    const start = spawnOwned(process.execPath, [join(DIST, 'scripts/start.js')], {
      env: {
        ...process.env,
        REDIS_URL: cluster.url,
        PORT: String(port),
        WORKER_PORT: String(workerPort),
        LOG_LEVEL: 'warn',
      },
      stdio: 'ignore',
    });
    const exited = new Promise<number | null>((resolve) => start.once('exit', (code) => resolve(code)));
    try {
      for (const appPort of [port, workerPort]) {
        const api = httpClient(`http://127.0.0.1:${appPort}`);
        await waitFor(
          async () => (await api('GET', '/health/ready').catch(() => undefined))?.status === 200,
          {
            timeoutMs: 60_000,
            intervalMs: 250,
            what: `the app on port ${appPort} to be ready`,
          },
        );
      }
    } finally {
      start.kill('SIGINT'); // forwarded to both apps, which drain and exit 0
    }
    expect(await exited).toBe(0);
  }, 120_000);
});

import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { RedisTimers } from '@sundial/redis';
import { DIST, ensureBuilt, type RedisServer, startRedis } from '@sundial/testing';

const run = promisify(execFile);

/** `node dist/scripts/repartition.js --to P` with REDIS_URL and SUNDIAL_PREFIX (docs/operations.md). */
describe('cluster: the repartition script', () => {
  let redis: RedisServer;

  beforeAll(async () => {
    [redis] = await Promise.all([startRedis(), ensureBuilt()]);
  }, 180_000);
  afterAll(() => redis?.stop());

  const script = (...args: string[]) =>
    run(process.execPath, [join(DIST, 'scripts', 'repartition.js'), ...args], {
      env: { ...process.env, REDIS_URL: redis.url, SUNDIAL_PREFIX: 'ops' },
    }).then(
      ({ stdout }) => ({ code: 0, stdout, stderr: '' }),
      (error: { code: number; stdout: string; stderr: string }) => error,
    );

  it('refuses a bad --to and the same count as { reason, field, message, fix }, and moves the timers', async () => {
    const client = new RedisTimers({ connection: redis.url, prefix: 'ops', partitions: 2 });
    await client.scheduleMany(
      Array.from({ length: 100 }, (_, n) => ({ key: `k:${n}`, handler: 'h', delay: '1h' })),
    );
    await client.dispose();

    for (const args of [[], ['--to', 'four'], ['--to', '2']]) {
      const refused = await script(...args);
      expect(refused.code).toBe(1);
      expect(JSON.parse(refused.stderr)).toEqual({
        reason: 'invalid',
        field: 'to',
        message: expect.any(String),
        fix: expect.any(String),
      });
    }
    const done = await script('--to', '3');
    expect(done.code).toBe(0);
    expect(done.stdout).toMatch(/repartition 2 → 3 done: \d+ keys moved/);
    expect(done.stdout).toContain('SUNDIAL_PARTITIONS=3');
    const moved = new RedisTimers({ connection: redis.url, prefix: 'ops', partitions: 3 });
    expect((await moved.list({ limit: 1000 })).items).toHaveLength(100);
    await moved.dispose();
  }, 60_000);
});

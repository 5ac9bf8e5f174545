import { type ErrorBody, httpClient, type RedisServer, startRedis } from '@sundial/testing/harness';
import { RedisPing } from '../../libs/server/src/redis-ping';
import { type RunningApp, startScheduler, startWorker } from '../local-cluster';

describe('both apps boot and answer over real HTTP', () => {
  let redis: RedisServer;
  let scheduler: RunningApp;
  let worker: RunningApp;
  let guarded: RunningApp;
  let running = new Set<RunningApp>();

  beforeAll(async () => {
    redis = await startRedis();
    [scheduler, worker, guarded] = await Promise.all([
      startScheduler(redis.url),
      startWorker(redis.url),
      startScheduler(redis.url, { apiToken: 's3cret' }),
    ]);
    running = new Set([scheduler, worker, guarded]);
  });

  afterAll(async () => {
    await Promise.all([...running].map((app) => app.close()));
    await redis?.stop();
  });

  it.each(['scheduler', 'worker'])('%s answers /health/live and /health/ready', async (name) => {
    const app = name === 'scheduler' ? scheduler : worker;
    expect(await app.api('GET', '/health/live')).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(await app.api('GET', '/health/ready')).toMatchObject({
      status: 200,
      body: { status: 'ok', info: { redis: { status: 'up' }, lifecycle: { status: 'up' } } },
    });
  });

  // Without its offline queue, a ping sent before the socket was up failed "Stream isn't writeable": every
  // app start logged a wait for Redis and lost a 500 ms retry with Redis up all along.
  it("the apps' readiness ping answers as soon as it is made, with Redis up", async () => {
    const ping = new RedisPing(redis.url);
    try {
      await expect(ping.ping()).resolves.toBeUndefined();
    } finally {
      await ping.close();
    }
  });

  it('both apps expose Prometheus metrics', async () => {
    for (const app of [scheduler, worker]) {
      const reply = await app.api<string>('GET', '/metrics');
      expect(reply.status).toBe(200);
      expect(reply.body).toContain('process_cpu_user_seconds_total');
    }
  });

  it('serves the OpenAPI document at /docs', async () => {
    expect((await scheduler.api<string>('GET', '/docs')).body).toContain('swagger');
    const document = await scheduler.api<{ paths: Record<string, unknown> }>('GET', '/docs-json');
    expect(Object.keys(document.body.paths)).toEqual(
      expect.arrayContaining(['/v1/timers', '/v1/timers/{key}', '/v1/registry/{id}', '/health/ready']),
    );
  });

  it('unknown routes answer 404 with the error body', async () => {
    const reply = await scheduler.api<ErrorBody>('GET', '/v2/nothing');
    expect(reply).toMatchObject({ status: 404, body: { error: { reason: 'not-found' } } });
  });

  describe('with SUNDIAL_API_TOKEN set', () => {
    const spec = { key: 'auth:1', handler: 'log', delay: '1h' };

    it('refuses /v1 calls without the token: 401 unauthorized, nothing changed', async () => {
      const missing = await guarded.api<ErrorBody>('POST', '/v1/timers', spec);
      const wrong = await httpClient(guarded.url, { authorization: 'Bearer nope' })<ErrorBody>(
        'POST',
        '/v1/timers',
        spec,
      );
      for (const reply of [missing, wrong]) {
        expect(reply.status).toBe(401);
        expect(reply.body.error).toMatchObject({
          reason: 'unauthorized',
          message: expect.any(String),
          fix: expect.any(String),
        });
      }
      expect((await scheduler.api('GET', '/v1/timers/auth%3A1')).status).toBe(404);
    });

    it('accepts the right bearer token, and leaves health open', async () => {
      const authorized = httpClient(guarded.url, { authorization: 'Bearer s3cret' });
      expect((await authorized('POST', '/v1/timers', spec)).status).toBe(201);
      expect((await authorized('GET', '/v1/registry')).status).toBe(200);
      expect((await guarded.api('GET', '/health/live')).status).toBe(200);
    });
  });
  // Last: it stops Redis. (The worker goes first: its runner cannot close cleanly without Redis —
  // see the 15 s shutdown deadline of serve().)
  it('without Redis: /v1 answers 503 unavailable, readiness 503, liveness still 200', async () => {
    await worker.close();
    running.delete(worker);
    await redis.stop();
    const reply = await scheduler.api<ErrorBody>('POST', '/v1/timers', {
      key: 'down:1',
      handler: 'log',
      delay: 10,
    });
    // Redis was away before the request: nothing of it was sent, so it changed nothing (not outcome-unknown)
    expect(reply).toMatchObject({
      status: 503,
      body: {
        error: {
          reason: 'unavailable',
          message: expect.stringMatching(/^Redis is unreachable \(.*\); the call changed nothing\.$/),
          fix: expect.stringMatching(/a retry is safe/),
        },
      },
    });
    expect(reply.body.error).not.toHaveProperty('detail');
    const ready = await scheduler.api<{ status: string; error: Record<string, unknown> }>(
      'GET',
      '/health/ready',
    );
    // what an operator reads, ioredis's own wording ("Stream isn't writeable…") as its cause
    expect(ready).toMatchObject({
      status: 503,
      body: {
        status: 'error',
        error: {
          redis: {
            status: 'down',
            message: `Redis does not answer at ${redis.url}`,
            cause: expect.any(String),
          },
        },
      },
    });
    expect((await scheduler.api('GET', '/health/live')).status).toBe(200);
  });
});

import { type ErrorBody, type HttpClient, keyPath, type RedisServer, startRedis } from '@sundial/testing';
import Redis from 'ioredis';
import { type RunningApp, startScheduler } from '../local-cluster';

/**
 * docs/spec.md §2, §5.2: a refusal over HTTP says what an HTTP caller can do. A not-found from the
 * TimersApi suggested `list()` (the in-process call),.
 */
describe('HTTP API: refusals in HTTP terms', () => {
  let redis: RedisServer;
  let raw: Redis;
  let scheduler: RunningApp;
  let api: HttpClient;
  const missing = keyPath('hw:missing');

  beforeAll(async () => {
    redis = await startRedis();
    raw = new Redis(redis.url);
    scheduler = await startScheduler(redis.url);
    api = scheduler.api;
    expect((await api('POST', '/v1/timers', { key: 'hw:1', handler: 'log', every: '1h' })).status).toBe(201);
  });

  afterAll(async () => {
    await scheduler?.close();
    raw?.disconnect();
    await redis?.stop();
  });

  it.each([
    ['POST', `${missing}/reschedule`, { delay: '1h' }],
    ['POST', `${missing}/pause`, undefined],
    ['POST', `${missing}/resume`, undefined],
    ['POST', `${missing}/trigger`, undefined],
    ['POST', `${missing}/backfill`, { from: 0, to: 1000 }],
    ['GET', `${missing}/next`, undefined],
    ['GET', missing, undefined],
  ])('%s %s: 404 not-found whose fix names the HTTP route, not list()', async (method, path, body) => {
    const reply = await api<ErrorBody>(method, path, body);
    expect(reply.status).toBe(404);
    expect(reply.body.error).toMatchObject({ reason: 'not-found', field: 'key' });
    expect(reply.body.error.fix).toContain('GET /v1/timers?prefix=');
    expect(reply.body.error.fix).not.toContain('list()');
  });
});

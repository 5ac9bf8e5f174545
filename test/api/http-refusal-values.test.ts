import { type ErrorBody, type HttpClient, keyPath, type RedisServer, startRedis } from '@sundial/testing';
import Redis from 'ioredis';
import { type RunningApp, startScheduler } from '../local-cluster';

/**
 * docs/spec.md §2 "Validation and errors" over HTTP: a refusal's message names the field and the value
 * as it was sent. A query number that is not one (`limit=abc`, `count=`) was shown as NaN, and a body
 * that is JSON but not an object (`null`, `42`) was called "not valid JSON" by the body parser.
 */
describe('HTTP API: refusals name the value sent', () => {
  let redis: RedisServer;
  let raw: Redis;
  let scheduler: RunningApp;
  let api: HttpClient;

  beforeAll(async () => {
    redis = await startRedis();
    raw = new Redis(redis.url);
    scheduler = await startScheduler(redis.url);
    api = scheduler.api;
    expect((await api('POST', '/v1/timers', { key: 'rv:1', handler: 'log', every: '1h' })).status).toBe(201);
  });

  afterAll(async () => {
    await scheduler?.close();
    raw?.disconnect();
    await redis?.stop();
  });

  const timer = keyPath('rv:1');
  const spec = JSON.stringify({ key: 'rv:2', handler: 'log', every: '1h' });
  // [method, path, body (raw text), the error's field, its message]
  const cases: [string, string, string | undefined, string | undefined, string][] = [
    [
      'GET',
      '/v1/timers?limit=abc',
      undefined,
      'limit',
      'limit must be an integer from 1 to 1000, got "abc".',
    ],
    ['GET', '/v1/timers?limit=', undefined, 'limit', 'limit must be an integer from 1 to 1000, got "".'],
    [
      'GET',
      '/v1/timers?dueBefore=tomorrow',
      undefined,
      'dueBefore',
      'dueBefore "tomorrow" is not an instant',
    ],
    [
      'GET',
      `${timer}/history?limit=abc`,
      undefined,
      'limit',
      'limit "abc" is not a whole number from 1 to 200',
    ],
    ['GET', `${timer}/next?count=`, undefined, 'count', 'count "" is not a whole number from 1 to 100'],
    [
      'GET',
      `${timer}/describe?count=ten`,
      undefined,
      'count',
      'count "ten" is not a whole number from 1 to 100',
    ],
    ['POST', '/v1/preview?count=abc', spec, 'count', 'count "abc" is not a whole number from 1 to 100'],
    ['POST', '/v1/timers', 'null', undefined, 'the timer spec must be a JSON object, got null'],
    ['POST', '/v1/timers', '42', undefined, 'the timer spec must be a JSON object, got 42'],
    ['POST', '/v1/preview', '"rv:2"', undefined, 'the timer spec must be a JSON object, got "rv:2"'],
    ['POST', `${timer}/reschedule`, 'null', 'when', 'when must be a JSON object, got null'],
  ];

  it.each(cases)(
    '%s %s, body %s: 400 invalid with the value as sent',
    async (method, path, body, field, message) => {
      const before = (await raw.keys('*')).sort();
      const reply = await api<ErrorBody>(
        method,
        path,
        undefined,
        body === undefined ? undefined : { raw: body },
      );
      expect(reply.status).toBe(400);
      expect(reply.body.error).toEqual({
        reason: 'invalid',
        ...(field && { field }),
        message,
        fix: expect.any(String),
      });
      expect((await raw.keys('*')).sort()).toEqual(before);
    },
  );
});

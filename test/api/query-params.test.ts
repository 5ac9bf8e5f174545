import type { ListResult } from '@sundial/core';
import { type ErrorBody, type HttpClient, keyPath, type RedisServer, startRedis } from '@sundial/testing';
import Redis from 'ioredis';
import { type RunningApp, startScheduler } from '../local-cluster';

/**
 * docs/spec.md §5.2: a query parameter a route does not take is refused (400 invalid, field = the
 * parameter, the fix listing what the route takes), and changes nothing. It was ignored:
 * `GET /v1/timers?prefx=inv:` (a typo) listed every timer, `DELETE /v1/timers?prefix=&staus=paused`
 * cancelled them all.
 */
describe('HTTP API: unknown query parameters', () => {
  let redis: RedisServer;
  let raw: Redis;
  let scheduler: RunningApp;
  let api: HttpClient;
  const timer = keyPath('qp:inv:1');

  beforeAll(async () => {
    redis = await startRedis();
    raw = new Redis(redis.url);
    scheduler = await startScheduler(redis.url);
    api = scheduler.api;
    for (const key of ['qp:inv:1', 'qp:other:1']) {
      expect((await api('POST', '/v1/timers', { key, handler: 'log', every: '1h' })).status).toBe(201);
    }
  });

  afterAll(async () => {
    await scheduler?.close();
    raw?.disconnect();
    await redis?.stop();
  });

  // [method, path, the unknown parameter, the fix]
  const cases: [string, string, string, string][] = [
    [
      'GET',
      '/v1/timers?prefx=qp:inv:',
      'prefx',
      'Did you mean prefix? GET /v1/timers takes prefix, status, limit, cursor, dueBefore.',
    ],
    ['DELETE', '/v1/timers?prefix=&staus=paused', 'staus', 'DELETE /v1/timers takes prefix.'],
    [
      'GET',
      `${timer}/history?limt=5`,
      'limt',
      'Did you mean limit? GET /v1/timers/:key/history takes limit.',
    ],
    ['GET', `${timer}/next?n=5`, 'n', 'GET /v1/timers/:key/next takes count.'],
    [
      'GET',
      `${timer}/describe?count=2&cuont=3`,
      'cuont',
      'Did you mean count? GET /v1/timers/:key/describe takes count, limit.',
    ],
    ['POST', '/v1/preview?cnt=2', 'cnt', 'Did you mean count? POST /v1/preview takes count.'],
  ];

  it.each(cases)('%s %s: 400 invalid naming %s, nothing changed', async (method, path, name, fix) => {
    const before = (await raw.keys('*')).sort();
    const body = method === 'POST' ? { key: 'qp:new', handler: 'log', every: '1h' } : undefined;
    const reply = await api<ErrorBody>(method, path, body);
    expect(reply.status).toBe(400);
    expect(reply.body.error).toEqual({
      reason: 'invalid',
      field: name,
      message: `${fix.replace(/^Did you mean \w+\? /, '').replace(/ takes .*/, '')} takes no query parameter "${name}".`,
      fix,
    });
    expect((await raw.keys('*')).sort()).toEqual(before);
  });

  it('the parameters a route takes still work', async () => {
    const listed = await api<ListResult>('GET', '/v1/timers?prefix=qp:inv:&limit=10');
    expect(listed.status).toBe(200);
    expect(listed.body.items.map((t) => t.key)).toEqual(['qp:inv:1']);
    expect((await api('GET', `${timer}/describe?count=2&limit=3`)).status).toBe(200);
  });
});

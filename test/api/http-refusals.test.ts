import type { ListResult } from '@sundial/core';
import { type ErrorBody, type HttpClient, keyPath, type RedisServer, startRedis } from '@sundial/testing';
import Redis from 'ioredis';
import { type RunningApp, startScheduler } from '../local-cluster';

/**
 * docs/spec.md §2, §5.2: refusals at the HTTP edge, in HTTP terms, changing nothing. Unknown query
 * parameters were ignored (`GET /v1/timers?prefx=inv:`, a typo, listed every timer, and
 * `DELETE /v1/timers?prefix=&staus=paused` cancelled them all); a not-found from the TimersApi suggested
 * `list()`, the in-process call; a POST without a body said "got undefined".
 */
describe('HTTP API: refusals at the edge', () => {
  let redis: RedisServer;
  let raw: Redis;
  let scheduler: RunningApp;
  let api: HttpClient;
  const timer = keyPath('qp:inv:1');
  const missing = keyPath('hw:missing');

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

  describe('a query parameter the route does not take', () => {
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

  describe('not-found', () => {
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

  describe('a POST or PUT without a body', () => {
    it.each([
      ['POST', '/v1/timers'],
      ['PUT', keyPath('hw:2')],
      ['POST', `${timer}/reschedule`],
      ['POST', `${timer}/backfill`],
      ['POST', '/v1/preview'],
    ])(
      '%s %s without a body: 400 invalid saying there was no body, nothing changed',
      async (method, path) => {
        const before = (await raw.keys('*')).sort();
        const reply = await api<ErrorBody>(method, path);
        expect(reply.status).toBe(400);
        expect(reply.body.error).toMatchObject({ reason: 'invalid', field: 'body' });
        expect(reply.body.error.message).toMatch(/no body/);
        expect(reply.body.error.message).not.toMatch(/undefined/);
        expect(reply.body.error.fix).toMatch(/^Send a JSON body/);
        expect((await raw.keys('*')).sort()).toEqual(before);
      },
    );
  });
});

import { Redis } from 'ioredis';
import {
  type ErrorBody,
  type HttpClient,
  httpClient,
  rawHttp,
  type RedisServer,
  startRedis,
  waitFor,
} from '@sundial/testing/harness';
import { gzipSync } from 'node:zlib';
import { type RunningApp, startScheduler } from '../local-cluster';

/**
 * Defect 9 of issue 8, the scheduler's HTTP edge: the token is checked before the body is read,
 * Node's own parser errors and unknown methods answer in the JSON error shape, a declared body over
 * the limit is refused from its Content-Length at once, and a full Redis says so.
 */
describe('HTTP edge of the scheduler', () => {
  const TOKEN = 's3cret';
  const MAX_PAYLOAD = 1024;
  let redis: RedisServer;
  let raw: Redis;
  let scheduler: RunningApp;
  let port: number;
  let authorized: HttpClient;

  beforeAll(async () => {
    redis = await startRedis();
    raw = new Redis(redis.url);
    scheduler = await startScheduler(redis.url, { apiToken: TOKEN, maxPayloadBytes: MAX_PAYLOAD });
    port = Number(new URL(scheduler.url).port);
    authorized = httpClient(scheduler.url, { authorization: `Bearer ${TOKEN}` });
  });

  afterAll(async () => {
    await scheduler?.close();
    raw?.disconnect();
    await redis?.stop();
  });

  const expectErrorShape = (body: unknown, reason: string) =>
    expect(body).toEqual({
      error: { reason, message: expect.any(String), fix: expect.any(String), ...fieldOf(body) },
    });

  describe('the API token comes before the body', () => {
    it('no token + malformed JSON → 401, not 400', async () => {
      const reply = await scheduler.api<ErrorBody>('POST', '/v1/timers', undefined, {
        raw: '{"key": ',
        headers: { 'content-type': 'application/json' },
      });
      expect(reply.status).toBe(401);
      expectErrorShape(reply.body, 'unauthorized');
    });

    it('no token + a body over the limit → 401, not 413', async () => {
      const reply = await scheduler.api<ErrorBody>('POST', '/v1/timers', {
        key: 'k',
        pad: 'x'.repeat(100_000),
      });
      expect(reply.status).toBe(401);
      expectErrorShape(reply.body, 'unauthorized');
    });

    it('with the token, malformed JSON is still a 400 invalid', async () => {
      const reply = await authorized<ErrorBody>('POST', '/v1/timers', undefined, {
        raw: '{"key": ',
        headers: { 'content-type': 'application/json' },
      });
      expect(reply.status).toBe(400);
      expectErrorShape(reply.body, 'invalid');
    });
  });

  it.each([
    ['GET /V1/timers (routes match without regard to case)', 'GET /V1/timers'],
    ['the absolute form', 'GET http://x/v1/timers'],
    ['DELETE /V1/timers?prefix=', 'DELETE /V1/timers?prefix='],
    ['DELETE in the absolute form', 'DELETE http://x/v1/timers?prefix='],
    ['both', 'DELETE http://x/V1/timers/edge%3Akept'],
  ])('%s without the token: 401, nothing listed or cancelled', async (_what, requestLine) => {
    await authorized('PUT', '/v1/timers/edge%3Akept', { handler: 'log', delay: '1h' });
    const reply = await rawHttp(port, `${requestLine} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expect(reply.status).toBe(401);
    expectErrorShape(JSON.parse(reply.body), 'unauthorized');
    expect((await authorized<{ status: string }>('GET', '/v1/timers/edge%3Akept')).body.status).toBe(
      'pending',
    );
  });

  it('a declared 10 MB body is refused with 413 from Content-Length at once, without waiting for it', async () => {
    const reply = await rawHttp(
      port,
      'POST /v1/timers HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
        `Authorization: Bearer ${TOKEN}\r\nContent-Length: 10485760\r\n\r\n{"key": 1}`,
    );
    expect(reply.status).toBe(413);
    expectErrorShape(JSON.parse(reply.body), 'payload-too-large');
  });

  // body-parser's own 413 said "request entity too large": neither the limit nor what was over it.
  it.each([
    [
      'sent chunked',
      (body: Buffer) => ['Transfer-Encoding: chunked', `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`],
    ],
    [
      'sent gzip, decompressed',
      (body: Buffer) => {
        const zipped = gzipSync(body);
        return [`Content-Encoding: gzip\r\nContent-Length: ${zipped.length}`, zipped];
      },
    ],
  ] as const)('a body %s over the limit: 413 naming the limit, nothing written', async (_how, framing) => {
    const limit = MAX_PAYLOAD + 16 * 1024; // the scheduler's: the payload's and the spec's room around it
    const spec = { key: 'edge:big', handler: 'log', delay: '1h', payload: 'x'.repeat(limit) };
    const [headers, body] = framing(Buffer.from(JSON.stringify(spec)));
    const head = `POST /v1/timers HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: Bearer ${TOKEN}\r\nConnection: close\r\n${headers}\r\n\r\n`;
    const reply = await rawHttp(port, Buffer.concat([Buffer.from(head), Buffer.from(body)]));
    expect(reply.status).toBe(413);
    const { error } = JSON.parse(reply.body) as ErrorBody;
    expectErrorShape({ error }, 'payload-too-large');
    expect(error.message).toBe(
      `the body is over the limit of ${limit} bytes (as read: chunked, or decompressed)`,
    );
    expect((await authorized('GET', '/v1/timers/edge%3Abig')).status).toBe(404);
  });

  it.each([
    ['a malformed request line', 'GARBAGE\r\n\r\n', 400],
    ['an unknown method', 'BREW /v1/timers HTTP/1.1\r\nHost: x\r\n\r\n', 400],
    ['a bad header', 'GET /health/live HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n', 400],
    ['a bad Content-Length', 'POST /v1/timers HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n', 400],
  ])('Node’s own parser refusal of %s answers in the JSON error shape', async (_what, request, status) => {
    const reply = await rawHttp(port, request);
    expect(reply.status).toBe(status);
    expect(reply.headers['content-type']).toMatch(/application\/json/);
    expectErrorShape(JSON.parse(reply.body), 'invalid');
  });

  it.each([
    ['GET', '/nope'],
    ['PATCH', '/v1/nope/k'],
    ['DELETE', '/v1/timers/k/nope'],
  ])('%s %s (no such route) answers 404 in the JSON error shape', async (method, path) => {
    const reply = await authorized<ErrorBody>(method, path);
    expect(reply.status).toBe(404);
    expectErrorShape(reply.body, 'not-found');
  });

  it('a full Redis (OOM): writes answer 503 saying so, and readiness is down with the reason', async () => {
    const spec = { key: 'oom:1', handler: 'log', delay: '1h' };
    const keysBefore = await raw.dbsize();
    await raw.config('SET', 'maxmemory', '1');
    try {
      const refused = await authorized<ErrorBody>('POST', '/v1/timers', spec);
      expect(refused.status).toBe(503);
      expect(refused.body.error).toMatchObject({
        reason: 'unavailable',
        message: expect.stringMatching(/out of memory/i),
        fix: expect.stringMatching(/maxmemory/),
      });
      const ready = await scheduler.api<{ error: { redis: { status: string; message: string } } }>(
        'GET',
        '/health/ready',
      );
      expect(ready.status).toBe(503);
      expect(ready.body.error.redis).toMatchObject({
        status: 'down',
        message: expect.stringMatching(/out of memory/i),
      });
      expect(await raw.dbsize()).toBe(keysBefore);
    } finally {
      await raw.config('SET', 'maxmemory', '0');
    }
    await waitFor(async () => (await scheduler.api('GET', '/health/ready')).status === 200, {
      what: 'ready again',
    });
    expect((await authorized('POST', '/v1/timers', spec)).status).toBe(201);
  });
});

/** The `field` of an error body, when it has one (the shape allows it). */
function fieldOf(body: unknown): { field?: unknown } {
  const field = (body as ErrorBody | undefined)?.error?.field;
  return field === undefined ? {} : { field };
}

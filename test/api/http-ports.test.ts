import { parseAllowedHosts, policyFor } from '@sundial/server';
import { type RawReply, type RedisServer, rawHttp, redisNow, startRedis } from '@sundial/testing/harness';
import { Redis } from 'ioredis';
import { type RunningApp, startScheduler, startWorker } from '../local-cluster';

/**
 * Both apps' HTTP ports answer the same way at the edge (docs/spec.md §5.2, libs/server/src/http-edge.ts):
 * every answer carries the security headers, those Node's own parser writes for a malformed request
 * included, and `Sundial-Now` (the app's estimate of Redis's now), those included that the edge refuses;
 * a `Host` that is not a name the app answers to is refused 403 (DNS rebinding) — the worker's `/health`
 * and `/metrics` too. Real requests on a socket.
 */
describe('the security headers, Sundial-Now and the Host check on both apps’ ports', () => {
  let redis: RedisServer;
  let scheduler: RunningApp;
  let worker: RunningApp;
  let listed: RunningApp;

  beforeAll(async () => {
    redis = await startRedis();
    [scheduler, worker, listed] = await Promise.all([
      startScheduler(redis.url),
      startWorker(redis.url),
      startWorker(redis.url, {}, { allowedHosts: parseAllowedHosts(['*.internal.example'], false) }),
    ]);
  });

  afterAll(async () => {
    await Promise.all([scheduler, worker, listed].map((app) => app?.close()));
    await redis?.stop();
  });

  const port = (app: RunningApp): number => Number(new URL(app.url).port);
  const get = (app: RunningApp, path: string, host: string): Promise<RawReply> =>
    rawHttp(port(app), `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
  const securityHeaders = (reply: RawReply) => ({
    nosniff: reply.headers['x-content-type-options'],
    referrer: reply.headers['referrer-policy'],
    frame: reply.headers['x-frame-options'],
    csp: reply.headers['content-security-policy'],
    poweredBy: reply.headers['x-powered-by'],
  });
  const SECURE = {
    nosniff: 'nosniff',
    referrer: 'no-referrer',
    frame: 'DENY',
    csp: policyFor('/'),
    poweredBy: undefined,
  };

  it.each([
    ['scheduler', 'a malformed request line', 'GARBAGE\r\n\r\n', 400],
    ['worker', 'a malformed request line', 'GARBAGE\r\n\r\n', 400],
    ['worker', 'an unknown method', 'BREW /metrics HTTP/1.1\r\nHost: x\r\n\r\n', 400],
    ['scheduler', 'a bad header', 'GET /health/live HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n', 400],
    ['worker', 'headers over 16 KiB', `GET /metrics?${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`, 431],
  ])('%s: Node’s parser refusal of %s carries the security headers', async (name, _what, request, status) => {
    const reply = await rawHttp(port(name === 'worker' ? worker : scheduler), request);
    expect(reply.status).toBe(status);
    expect(securityHeaders(reply)).toEqual(SECURE);
    // written before any route: no estimate of Redis's now is read for it (docs/spec.md §5.2)
    expect(reply.headers['sundial-now']).toBeUndefined();
    expect(JSON.parse(reply.body)).toMatchObject({ error: { reason: 'invalid' } });
  });

  it.each(['/health/live', '/health/ready', '/metrics'])(
    'worker %s carries the security headers',
    async (path) => {
      const reply = await get(worker, path, '127.0.0.1');
      expect(reply.status).toBe(200);
      expect(securityHeaders(reply)).toEqual(SECURE);
    },
  );

  it.each([
    ['/health/live', '127.0.0.1', 200],
    ['/health/ready', '127.0.0.1', 200],
    ['/metrics', '127.0.0.1', 200],
    ['/metrics', 'attacker.example', 403],
  ])(
    'worker %s (Host %s, %d) carries Sundial-Now, its estimate of Redis’s now',
    async (path, host, status) => {
      const raw = new Redis(redis.url);
      try {
        const before = await redisNow(raw);
        const reply = await get(worker, path, host);
        const after = await redisNow(raw);
        expect(reply.status).toBe(status);
        // between the two reads of Redis's clock, with slack for the estimate (off by up to half the round
        // trip it was measured with: a loaded host's can take a few hundred ms)
        const now = Number(reply.headers['sundial-now']);
        expect(now).toBeGreaterThanOrEqual(before - 500);
        expect(now).toBeLessThanOrEqual(after + 500);
      } finally {
        raw.disconnect();
      }
    },
  );

  it.each([
    ['a rebound name', 'attacker.example:3001', '/metrics'],
    ['a name like localhost', 'localhost.attacker.example', '/health/live'],
  ])('worker: %s is refused 403 forbidden on host', async (_what, host, path) => {
    for (const app of [worker, listed]) {
      const reply = await get(app, path, host);
      expect(reply.status).toBe(403);
      expect(securityHeaders(reply)).toEqual(SECURE);
      const { error } = JSON.parse(reply.body) as { error: Record<string, string> };
      expect([error.reason, error.field]).toEqual(['forbidden', 'host']);
      expect(error.message).toContain(`the Host header "${host}" is not a name this worker answers to`);
      expect(error.fix).toContain('add it to SUNDIAL_ALLOWED_HOSTS');
    }
  });

  it('worker: IPs, localhost, single labels (probes, Prometheus, compose) and SUNDIAL_ALLOWED_HOSTS go on', async () => {
    for (const host of [`127.0.0.1:${port(worker)}`, '10.1.2.3:3001', 'localhost', 'worker:3001']) {
      expect({ host, status: (await get(worker, '/metrics', host)).status }).toEqual({ host, status: 200 });
    }
    expect((await get(worker, '/metrics', 'w1.internal.example')).status).toBe(403);
    expect((await get(listed, '/metrics', 'w1.internal.example')).status).toBe(200);
  });
});

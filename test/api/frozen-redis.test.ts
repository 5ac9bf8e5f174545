import { type ErrorBody, type RedisServer, startRedis, waitFor, within } from '@sundial/testing/harness';
import { type RunningApp, startScheduler, startWorker } from '../local-cluster';

const BOUND_MS = 300;
/** A liveness bound, not a measurement: the bound (readiness: its 1 s ping) and a margin for a loaded host. */
const ANSWER_DEADLINE_MS = 1_000 + 1_700;

/**
 * The scheduler's API over a frozen Redis (SIGSTOP: sockets open, no answer): every request answers 503
 * `unavailable` within SUNDIAL_COMMAND_TIMEOUT_MS (docs/spec.md §5.2, §5.4), a write's saying its
 * outcome is unknown; once Redis answers again, the same Idempotency-Key answers what Redis ran late.
 * Before the bound a request waited as long as Redis stayed frozen.
 */
describe('scheduler API while Redis is frozen', () => {
  let redis: RedisServer;
  let scheduler: RunningApp;

  beforeAll(async () => {
    redis = await startRedis();
    scheduler = await startScheduler(redis.url, { commandTimeoutMs: BOUND_MS });
  });
  afterAll(async () => {
    redis?.signal('SIGCONT');
    await scheduler?.close();
    await redis?.stop();
  });

  it('reads and writes answer 503 within the bound; the same Idempotency-Key then answers the write', async () => {
    const api = scheduler.api;
    const keyed = { headers: { 'Idempotency-Key': 'frozen-1' } };
    const spec = { key: 'frozen', handler: 'job', delay: 60_000 };
    expect((await api('GET', '/v1/timers')).status).toBe(200);
    redis.signal('SIGSTOP');

    const [read, write, unkeyed, ready] = await within(
      Promise.all([
        api<ErrorBody>('GET', '/v1/timers/frozen'),
        api<ErrorBody>('POST', '/v1/timers', spec, keyed),
        api<ErrorBody>('POST', '/v1/timers', { ...spec, key: 'frozen-unkeyed' }),
        api('GET', '/health/ready'),
      ]),
      ANSWER_DEADLINE_MS,
      'the requests',
    );
    expect(read.status).toBe(503);
    expect(read.body.error).toMatchObject({ reason: 'unavailable' });
    expect(read.body.error).not.toHaveProperty('detail');
    // the keyed write waited on its key's record, sent before its script: it changed no timer
    expect(write.status).toBe(503);
    expect(write.body.error).toMatchObject({ reason: 'unavailable' });
    expect(write.body.error).not.toHaveProperty('detail');
    expect(write.body.error.message).toMatch(/before this write was sent; the call changed no timer/);
    // one without a key sent its script: it may or may not have been applied
    expect(unkeyed.status).toBe(503);
    expect(unkeyed.body.error).toMatchObject({ reason: 'unavailable', detail: { code: 'outcome-unknown' } });
    expect(unkeyed.body.error.fix).toMatch(/Idempotency-Key/);
    expect(ready.status).toBe(503);

    redis.signal('SIGCONT');
    const retry = () => api<{ id: string; version: number }>('POST', '/v1/timers', spec, keyed);
    const created = await waitFor(async () => ((await retry()).status === 201 ? retry() : false), {
      timeoutMs: 5_000, // deadline: the connection may be making itself anew
      what: 'the retried write',
    });
    const row = await api<{ id: string; version: number }>('GET', '/v1/timers/frozen');
    expect(row.body).toMatchObject({ id: created.body.id, version: 1 });
  });

  it("a worker's shutdown during the freeze ends: its fire queues are dropped, not left waiting on a QUIT", async () => {
    const worker = await startWorker(redis.url, {}, { shutdownGraceMs: 300 });
    redis.signal('SIGSTOP');
    // A liveness bound, not a measurement: the grace, 3 s for Redis (CLOSE_REDIS_WAIT_MS), 2 s to drop
    // BullMQ's connections, 1 s QUITs, a margin. Before, @nestjs/bullmq's close of the fire queues waited
    // for good (the app's signal handler exits 1 at grace + 15 s).
    await within(worker.close(), 300 + 3_000 + 2_000 + 2_000 + 3_000, "the worker's close");
  });
});

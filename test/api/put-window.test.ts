import type { INestApplication } from '@nestjs/common';
import {
  createEngine,
  isSundialError,
  type Timer,
  type TimersBackend,
  type TimerSpec,
  type WriteOptions,
} from '@sundial/core';
import { type HttpClient, httpClient, keyPath, type RedisServer, startRedis } from '@sundial/testing/harness';
import type { AddressInfo } from 'node:net';
import { createRedisSchedulerService } from '../../apps/scheduler/src/redis-scheduler-service';
import { createSchedulerApp } from '../../apps/scheduler/src/scheduler-app';
import { schedulerConfigFromEnv } from '../../apps/scheduler/src/scheduler-config';
import type { SchedulerService, SchedulerServiceFactory } from '../../apps/scheduler/src/scheduler-service';
import { TEST_ENV } from '../local-cluster';

/**
 * docs/spec.md §5.2: a `PUT /v1/timers/:key` with an `Idempotency-Key` is two calls, a create and, on
 * `duplicate-key`, a replace. Its create let go of the key's record when refused, and its replace made it
 * again: a request sent with the same key in between was applied (201), and the PUT then refused 422 —
 * the second request won over the first. Here that request is sent exactly in between: the backend's
 * create refusal is held until it is answered (no sleeps).
 */
describe.each(['redis', 'engine'] as const)(
  '%s: PUT and its Idempotency-Key between its two calls',
  (backend) => {
    let redis: RedisServer | undefined;
    let app: INestApplication | undefined;
    let api: HttpClient;
    /** run once, when a PUT's create (the call naming its replace) is refused duplicate-key, before it answers */
    let between: (() => Promise<void>) | undefined;

    /** `service` with its schedule calls watched for a PUT's create refused duplicate-key */
    const watched = (service: SchedulerService): SchedulerService => {
      const { timers } = service;
      const schedule = async (spec: TimerSpec, options?: WriteOptions): Promise<Timer> => {
        try {
          return await timers.schedule(spec, options);
        } catch (error) {
          const step = between;
          if (options?.unlessAnswered && isSundialError(error) && error.reason === 'duplicate-key' && step) {
            between = undefined;
            await step();
          }
          throw error;
        }
      };
      const proxy = new Proxy(timers, {
        get: (target, name) => {
          if (name === 'schedule') return schedule;
          const value: unknown = Reflect.get(target, name, target);
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        },
      });
      return { ...service, timers: proxy, start: () => service.start(), stop: () => service.stop() };
    };
    const overEngine: SchedulerServiceFactory = () => {
      const timers: TimersBackend = createEngine({ handlers: { log: () => undefined } });
      return watched({ timers, start: async () => undefined, stop: () => timers.dispose() });
    };
    const overRedis: SchedulerServiceFactory = (config, logger) =>
      watched(createRedisSchedulerService(config, logger));

    beforeAll(async () => {
      redis = await startRedis();
      const config = schedulerConfigFromEnv({ ...TEST_ENV, REDIS_URL: redis.url });
      app = await createSchedulerApp(config, backend === 'redis' ? overRedis : overEngine);
      await app.listen(0, '127.0.0.1');
      api = httpClient(`http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`);
    });

    afterAll(async () => {
      await app?.close();
      await redis?.stop();
    });

    const keyed = (idempotencyKey: string) => ({ headers: { 'Idempotency-Key': idempotencyKey } });
    const spec = { handler: 'log', delay: '1h' };

    it('a POST sent with the key between the create refused and the replace: 422, the PUT replaces (200)', async () => {
      expect((await api('PUT', keyPath('pw:k'), spec)).status).toBe(201);
      let posted: { status: number; body: unknown } | undefined;
      between = async () => {
        posted = await api('POST', '/v1/timers', { ...spec, key: 'pw:other' }, keyed('pw-key'));
      };
      const put = await api<Timer>('PUT', keyPath('pw:k'), { ...spec, delay: '2h' }, keyed('pw-key'));
      expect(posted).toMatchObject({
        status: 422,
        body: { error: { reason: 'idempotency-conflict', field: 'Idempotency-Key' } },
      });
      expect(put.status).toBe(200);
      expect((await api('GET', keyPath('pw:other'))).status).toBe(404);
      expect((await api('GET', keyPath('pw:k'))).body).toEqual(put.body);
      // the PUT retried answers as it did; the POST retried is still refused
      expect(await api('PUT', keyPath('pw:k'), { ...spec, delay: '2h' }, keyed('pw-key'))).toMatchObject({
        status: 200,
        body: put.body,
      });
      expect((await api('POST', '/v1/timers', { ...spec, key: 'pw:other' }, keyed('pw-key'))).status).toBe(
        422,
      );
    });
  },
);

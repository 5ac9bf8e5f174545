import type { Timer } from '@sundial/core';
import { RedisTimers } from '@sundial/redis';
import {
  type AppProcess,
  ensureBuilt,
  killAll,
  type RedisServer,
  spawnApp,
  startRedis,
  waitFor,
} from '@sundial/testing/harness';
import { Redis } from 'ioredis';
import type { RunRecord } from '../fixtures/fastify/src/run-log';

/** What a case works with: its own private Redis, the replicas it starts there, and reads of that Redis. */
interface OwnRedis {
  replica(name: string, env?: Record<string, string>): Promise<AppProcess>;
  allRuns(): Promise<RunRecord[]>;
  runsOf(key: string): Promise<Omit<RunRecord, 'due'>[]>;
  settled(key: string): Promise<Timer>;
}

/**
 * Runs `body` on a redis-server of its own, then stops its replicas, its clients and that Redis. Each
 * case has one, so the cases run side by side (`it.concurrent`: most of their time is waiting on leases,
 * a grace and a cron's seconds) and no replica of one case takes another's runs, crons or metrics.
 */
async function onOwnRedis(body: (own: OwnRedis) => Promise<void>): Promise<void> {
  const redis: RedisServer = await startRedis();
  const replicas: AppProcess[] = [];
  const timers = new RedisTimers({ connection: redis.url });
  const records = new Redis(redis.url);
  const allRuns = async (): Promise<RunRecord[]> =>
    (await records.lrange('fixture:runs', 0, -1)).map((line) => JSON.parse(line) as RunRecord);
  try {
    await body({
      async replica(name, env = {}) {
        const app = await spawnApp('test/fixtures/fastify', name, { REDIS_URL: redis.url, ...env });
        replicas.push(app);
        return app;
      },
      allRuns,
      runsOf: async (key) =>
        (await allRuns())
          .filter((run) => run.key === key)
          .map(({ event, key: runKey, runCount, pid }) => ({ event, key: runKey, runCount, pid })),
      settled: (key) =>
        waitFor(
          async () => {
            const timer = await timers.get(key);
            return (timer?.status === 'completed' || timer?.status === 'failed') && timer;
          },
          { what: `${key} to settle`, timeoutMs: 20_000 },
        ),
    });
  } finally {
    await timers.dispose();
    records.disconnect();
    await killAll(replicas);
    await redis.stop();
  }
}

/**
 * test/fixtures/fastify: a Nest app on @nestjs/platform-fastify set up as README "Use it from your Nest
 * app" says (SundialModule, SundialWorkerModule with the dispatcher, SundialHealthModule, SundialErrorFilter
 * as APP_FILTER, its own /health/ready and /metrics), run as replicas: its routes answer on Fastify, and
 * the delivery modes of docs/spec.md §3.8 hold when a replica is SIGKILLed mid-run or stopped with SIGTERM.
 */
describe('a Nest app on Fastify', () => {
  beforeAll(() => ensureBuilt(), 180_000);

  /** A case run side by side with the others (`it.concurrent`), on its own Redis (onOwnRedis). */
  const onItsOwnRedis = (name: string, body: (own: OwnRedis) => Promise<void>, timeoutMs: number) =>
    it.concurrent(name, () => onOwnRedis(body), timeoutMs);

  const metricsOf = (app: AppProcess): Promise<string> =>
    fetch(`${app.url}/metrics`).then((response) => response.text());

  /** Schedules a `fixture.work` run through the app's own route, kept once ended. */
  const work = (app: AppProcess, key: string, payload: { ms: number; rerunMs?: number }, delivery: string) =>
    app.api('POST', '/timers', {
      key,
      handler: 'fixture.work',
      payload,
      delay: 50,
      delivery,
      removeOnComplete: false,
    });

  onItsOwnRedis(
    'serves its routes (a TimerSpec from a JSON body, a refusal as { error } with its status, health and metrics), and on SIGTERM (enableShutdownHooks) a run within the grace finishes, one past it is aborted and, at-most-once, recorded lost',
    async ({ replica, runsOf, settled }) => {
      // One replica for both (a boot is ~1.5 s of CPU): the routes leave it a timer due in 1 h, which is
      // not running when the SIGTERM comes, so that the drain below hands back term:long alone.
      const app = await replica('routes', { FIXTURE_GRACE_MS: '2000' });
      const created = await app.api('POST', '/timers', {
        key: 'routes:1',
        handler: 'fixture.work',
        payload: { ms: 0 },
        delay: 50,
        removeOnComplete: false,
      });
      expect(created).toMatchObject({ status: 201, body: { key: 'routes:1', status: 'pending' } });
      await settled('routes:1');
      expect(await runsOf('routes:1')).toEqual([
        { event: 'started', key: 'routes:1', runCount: 1, pid: app.pid },
        { event: 'finished', key: 'routes:1', runCount: 1, pid: app.pid },
      ]);

      const refused = await app.api('POST', '/timers', {
        key: 'routes:2',
        handler: 'fixture.work',
        delay: 'soon',
      });
      expect(refused.status).toBe(400);
      expect(refused.body).toEqual({ error: expect.objectContaining({ reason: 'invalid', field: 'delay' }) });
      const later = { key: 'routes:3', handler: 'fixture.work', delay: '1h' };
      expect((await app.api('POST', '/timers', later)).status).toBe(201);
      const taken = await app.api('POST', '/timers', later);
      expect(taken).toMatchObject({
        status: 409,
        body: { error: { reason: 'duplicate-key', field: 'key' } },
      });

      expect((await app.api('GET', '/health/ready')).body).toMatchObject({
        status: 'ok',
        info: { sundial: { status: 'up', worker: 'running' } },
      });
      const metrics = await metricsOf(app);
      expect(metrics).toContain('sundial_runs_total{handler="fixture.work",status="ok"} 1');
      expect(metrics).toContain('sundial_fire_consumers{partition="0"} 1');
      expect(metrics).toContain('sundial_redis_up 1');

      // SIGTERM while two runs are under way: one ends within the 2 s grace, one is past it
      for (const [key, ms] of [
        ['term:short', 500],
        ['term:long', 120_000],
      ] as const) {
        await work(app, key, { ms }, 'at-most-once');
      }
      await waitFor(
        async () => (await runsOf('term:long')).length === 1 && (await runsOf('term:short')).length === 1,
        {
          what: 'both runs to start',
        },
      );
      app.kill('SIGTERM');
      // While it drains, its HTTP server still answers, and its readiness is down (docs/spec.md §4.6).
      await waitFor(async () => (await app.api('GET', '/health/ready')).status === 503, {
        what: 'readiness down while draining',
        intervalMs: 20,
      });
      // Nest's shutdown hooks close the app, then raise the signal again: the process ends by SIGTERM.
      expect(await app.exited).toMatchObject({ signal: 'SIGTERM' });
      expect(await settled('term:short')).toMatchObject({ status: 'completed', last: { status: 'ok' } });
      expect((await runsOf('term:short')).map((run) => run.event)).toEqual(['started', 'finished']);
      expect(await settled('term:long')).toMatchObject({
        status: 'failed',
        runCount: 1,
        last: { status: 'failed', error: { reason: 'lost' } },
      });
      expect((await runsOf('term:long')).map((run) => run.event)).toEqual(['started', 'aborted']);
      expect(app.lines.filter((line) => line.includes('handed back'))).toEqual([
        expect.stringContaining("at-most-once, recorded lost (reason 'lost'), not run again: term:long"),
      ]);
    },
    90_000,
  );

  onItsOwnRedis(
    'a replica SIGKILLed mid-run: an at-least-once timer runs again elsewhere, an at-most-once one is recorded lost and never run again',
    async ({ replica, runsOf, settled }) => {
      // Only the replica that dies has a short lease: the survivor must not look dead when it stalls.
      const doomed = await replica('doomed', { FIXTURE_LEASE_MS: '1500' });
      const keys = ['kill:at-least-once', 'kill:at-most-once'] as const;
      // the first run outlasts the test; a re-run is quick
      for (const key of keys)
        await work(doomed, key, { ms: 120_000, rerunMs: 50 }, key.slice('kill:'.length));
      await waitFor(async () => (await Promise.all(keys.map(runsOf))).every((runs) => runs.length === 1), {
        what: 'both runs to start',
      });
      expect((await Promise.all(keys.map(runsOf))).flat().map((run) => run.pid)).toEqual([
        doomed.pid,
        doomed.pid,
      ]);
      const survivor = await replica('survivor');
      doomed.kill('SIGKILL');
      expect((await doomed.exited).signal).toBe('SIGKILL');

      expect(await settled('kill:at-least-once')).toMatchObject({
        status: 'completed',
        runCount: 2,
        last: { status: 'ok' },
      });
      expect(await runsOf('kill:at-least-once')).toEqual([
        { event: 'started', key: 'kill:at-least-once', runCount: 1, pid: doomed.pid },
        { event: 'started', key: 'kill:at-least-once', runCount: 2, pid: survivor.pid },
        { event: 'finished', key: 'kill:at-least-once', runCount: 2, pid: survivor.pid },
      ]);
      expect(await settled('kill:at-most-once')).toMatchObject({
        status: 'failed',
        runCount: 1,
        last: { status: 'failed', error: { reason: 'lost' } },
      });
      expect(await runsOf('kill:at-most-once')).toEqual([
        { event: 'started', key: 'kill:at-most-once', runCount: 1, pid: doomed.pid },
      ]);
      // The survivor, which settled it, names it in a warn line (docs/operations.md SundialRunsLost).
      await waitFor(() => survivor.lines.some((line) => line.includes('kill:at-most-once')) || undefined, {
        what: 'the lost-run warn line',
      });
      expect(survivor.lines.filter((line) => line.includes('kill:at-most-once'))).toEqual([
        expect.stringContaining('at-most-once run lost with its worker'),
      ]);
      // Its reconciler (dispatch: true) settled both: counted in the app's own /metrics.
      const metrics = await metricsOf(survivor);
      expect(metrics).toContain('sundial_runs_requeued_total 1');
      expect(metrics).toContain('sundial_runs_lost_total 1');
      survivor.kill('SIGKILL');
      await survivor.exited;
    },
    90_000,
  );

  onItsOwnRedis(
    "@DistributedCron({ delivery: 'at-most-once' }): the slot of a replica SIGKILLed mid-run is recorded lost, never run again, and the cron goes on",
    async ({ replica, allRuns }) => {
      // Every second, each run 2.5 s (later slots are skipped while it goes on): both replicas declare it.
      const env = { CRON_WORK_MS: '2500', FIXTURE_LEASE_MS: '1500' };
      const pair = await Promise.all([replica('cron-a', env), replica('cron-b', env)]);
      const key = 'cron:fixture.tick';
      const ticks = async () => (await allRuns()).filter((run) => run.key === key);
      const running = await waitFor(
        async () => {
          const runs = await ticks();
          if (!runs.some((run) => run.event === 'finished')) return undefined;
          return runs.find(
            (run) => run.event === 'started' && !runs.some((o) => o.event !== 'started' && o.due === run.due),
          );
        },
        { what: 'a tick under way after a finished one', timeoutMs: 20_000 },
      );
      const victim = pair.find((app) => app.pid === running.pid)!;
      const survivor = pair.find((app) => app !== victim)!;
      victim.kill('SIGKILL');
      await victim.exited;
      await waitFor(
        async () =>
          (await ticks()).filter((run) => run.event === 'finished' && run.due > running.due).length >= 2,
        { what: 'two ticks after the killed one', timeoutMs: 30_000 },
      );
      // The killed slot started once, on the victim, and never again.
      expect((await ticks()).filter((run) => run.due === running.due)).toEqual([running]);
      expect(survivor.lines.filter((line) => line.includes('lost with its worker'))).toEqual([
        expect.stringContaining(key),
      ]);
    },
    90_000,
  );
});

import type { Timer, TimerEvent } from '@sundial/core';
import { RedisTimers, SundialKeys } from '@sundial/redis';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import {
  type AppProcess,
  clusterEnv,
  ensureBuilt,
  killAll,
  readRuns,
  type RedisServer,
  type RunRecord,
  SHORT_LEASE,
  spawnApp,
  startRedis,
  waitFor,
} from '@sundial/testing/harness';
import { midRunSpecs, settledTimers } from './mid-run';

/**
 * Failures of real processes: a worker SIGKILLed mid-run, fire jobs deleted behind the system's back,
 * a worker stopped with SIGTERM. One private Redis and one scheduler process; workers come and go.
 * The tests run in order and each leaves no worker running.
 */
describe('cluster recovery', () => {
  const PARTITIONS = 2;
  let redis: RedisServer;
  let env: Record<string, string>;
  let scheduler: AppProcess;
  const workers: AppProcess[] = [];
  let client: RedisTimers;
  let records: Redis;

  beforeAll(async () => {
    [redis] = await Promise.all([startRedis(), ensureBuilt()]);
    env = clusterEnv(redis.url, { SUNDIAL_PARTITIONS: String(PARTITIONS) });
    scheduler = await spawnApp('scheduler', 'scheduler', env);
    client = new RedisTimers({ connection: redis.url, partitions: PARTITIONS });
    records = new Redis(`${redis.url}/1`);
  }, 180_000);

  afterAll(async () => {
    await client?.dispose();
    records?.disconnect();
    await killAll([scheduler, ...workers]);
    await redis?.stop();
  });

  async function startWorker(name: string, extra: Record<string, string> = {}): Promise<AppProcess> {
    const worker = await spawnApp('worker', name, { ...env, ...extra });
    workers.push(worker);
    return worker;
  }

  const runsOf = async (prefix: string): Promise<RunRecord[]> =>
    (await readRuns(records)).filter((run) => run.key.startsWith(prefix));

  const settled = (keys: string[]): Promise<Timer[]> => settledTimers(client, keys);

  it('SIGKILL of a worker mid-run: at-least-once runs again and is counted; at-most-once is recorded lost', async () => {
    // Only the worker that dies has a short lease: the others must not look dead when they stall.
    const doomed = await startWorker('doomed', SHORT_LEASE);
    // the first run outlasts the test; a re-run after the worker died is quick
    const keys = (await client.scheduleMany(midRunSpecs('kill:', 10))).map((timer) => timer.key);
    await waitFor(async () => (await runsOf('kill:')).length === keys.length, { what: 'every run to start' });
    expect(new Set((await runsOf('kill:')).map((run) => run.pid))).toEqual(new Set([doomed.pid]));

    // Killed before the survivor starts: its 1.5 s lease runs out while the survivor boots.
    doomed.kill('SIGKILL');
    expect((await doomed.exited).signal).toBe('SIGKILL');
    const survivor = await startWorker('survivor');

    const timers = await settled(keys);
    const runs = await runsOf('kill:');
    for (const timer of timers) {
      const own = runs.filter((run) => run.id === timer.id);
      if (timer.delivery === 'at-least-once') {
        // ran again on the survivor, and runCount / last show both runs
        expect(timer).toMatchObject({ status: 'completed', runCount: 2, last: { status: 'ok' } });
        expect(own.map(({ event, pid, runCount }) => ({ event, pid, runCount }))).toEqual([
          { event: 'started', pid: doomed.pid, runCount: 1 },
          { event: 'started', pid: survivor.pid, runCount: 2 },
          { event: 'finished', pid: survivor.pid, runCount: 2 },
        ]);
      } else {
        // never run again: recorded failed with reason 'lost'
        expect(timer).toMatchObject({
          status: 'failed',
          runCount: 1,
          last: { status: 'failed', error: { reason: 'lost' } },
        });
        expect(own.map(({ event, pid }) => ({ event, pid }))).toEqual([
          { event: 'started', pid: doomed.pid },
        ]);
      }
    }
    survivor.kill('SIGKILL');
    await survivor.exited;
  }, 60_000);

  it('fire jobs deleted behind the system’s back are re-armed by the reconciler and run once', async () => {
    const keys = new SundialKeys('sundial', PARTITIONS);
    const queues = keys.all().map(
      (partition) =>
        new Queue(keys.queueName(partition), {
          connection: { url: redis.url },
          prefix: keys.bullPrefix,
        }),
    );
    try {
      // No worker is running: the dispatcher turns the due timers into jobs that nobody takes.
      const created = await client.scheduleMany(
        Array.from({ length: 30 }, (_, n) => ({ key: `lostjob:${n}`, handler: 'record', delay: 50 })),
      );
      const pendingJobs = async () =>
        (
          await Promise.all(queues.map((queue) => queue.getJobs(['waiting', 'delayed', 'prioritized'])))
        ).flat();
      await waitFor(
        async () =>
          (await pendingJobs()).reduce(
            (sum, job) => sum + (job.data as { timers: unknown[] }).timers.length,
            0,
          ) === 30,
        { what: 'all 30 timers to be in fire jobs' },
      );
      for (const job of await pendingJobs()) await job.remove();
      expect(await pendingJobs()).toEqual([]);

      await startWorker('after-deletion');
      const runs = await waitFor(
        async () => {
          const seen = await runsOf('lostjob:');
          return seen.length >= 30 && seen;
        },
        { timeoutMs: 20_000, what: 'the reconciler to re-arm all 30' },
      );
      expect(runs.map((run) => run.id).sort()).toEqual(created.map((timer) => timer.id).sort());
      for (const run of runs) expect(run.at).toBeGreaterThanOrEqual(run.due);
      // each ran once: nothing left live, and no second record arrives for any of them
      await waitFor(async () =>
        (await Promise.all(created.map((timer) => client.check(timer.id)))).every((live) => !live),
      );
      expect(await runsOf('lostjob:')).toHaveLength(30);
    } finally {
      await Promise.all(queues.map((queue) => queue.close()));
    }
  }, 60_000);

  it('SIGTERM under load: readiness goes false at once, running handlers finish, exit 0, no run lost', async () => {
    const worker = workers[workers.length - 1];
    expect(worker.name).toBe('after-deletion');
    // Handlers running on this worker when it gets SIGTERM: they end once the test releases them, after
    // it saw readiness go false (a fixed while, 8 s, was a guess at how long the peer takes to start:
    // up to 5.7 s measured at load ~10), well inside the grace (25 s).
    const release = 'release:term:slow';
    const slow = await client.scheduleMany(
      Array.from({ length: 8 }, (_, n) => ({
        key: `term:slow:${n}`,
        handler: 'gated',
        payload: { release },
        delay: 50,
        removeOnComplete: false,
      })),
    );
    await waitFor(async () => (await runsOf('term:slow:')).length === slow.length, {
      what: 'the slow runs to start',
    });
    const peer = await startWorker('peer');
    // Load that goes on falling due while the worker drains: the peer must run every one of them.
    const stream = await client.scheduleMany(
      Array.from({ length: 40 }, (_, n) => ({
        key: `term:stream:${n}`,
        handler: 'record',
        delay: 100 + n * 75,
        removeOnComplete: false,
      })),
    );

    worker.kill('SIGTERM');
    const readiness = await waitFor(
      async () => {
        const status = (await worker.api('GET', '/health/ready')).status;
        return (
          status !== 200 && {
            status,
            finished: (await runsOf('term:slow:')).filter((r) => r.event === 'finished').length,
          }
        );
      },
      { timeoutMs: 2_000, intervalMs: 10, what: 'readiness to go false' },
    );
    // not ready while every handler is still running
    expect(readiness).toEqual({ status: 503, finished: 0 });
    await records.set(release, '1');
    expect(await worker.exited).toEqual({ code: 0, signal: null });

    // each running handler finished on the stopping worker, once
    const slowRuns = await runsOf('term:slow:');
    for (const timer of slow) {
      expect(slowRuns.filter((run) => run.id === timer.id).map(({ event, pid }) => ({ event, pid }))).toEqual(
        [
          { event: 'started', pid: worker.pid },
          { event: 'finished', pid: worker.pid },
        ],
      );
    }
    expect((await settled(slow.map((t) => t.key))).map((t) => [t.status, t.runCount])).toEqual(
      slow.map(() => ['completed', 1]),
    );
    // no run of the stream lost or doubled across the shutdown
    const streamTimers = await settled(stream.map((t) => t.key));
    expect(streamTimers.map((t) => [t.status, t.runCount])).toEqual(stream.map(() => ['completed', 1]));
    const streamRuns = await runsOf('term:stream:');
    expect(streamRuns.map((run) => run.id).sort()).toEqual(stream.map((t) => t.id).sort());
    expect(streamRuns.some((run) => run.pid === peer.pid)).toBe(true);

    peer.kill('SIGTERM');
    expect(await peer.exited).toEqual({ code: 0, signal: null });
  }, 60_000);

  it('SIGTERM past the grace period aborts the handler, hands the run back, and still exits 0', async () => {
    const impatient = await startWorker('impatient', { SUNDIAL_SHUTDOWN_GRACE_MS: '300' });
    const timer = await client.schedule({
      key: 'term:2',
      handler: 'slow',
      payload: { ms: 120_000, rerunMs: 50 },
      delay: 50,
      removeOnComplete: false,
    });
    await waitFor(async () => (await runsOf('term:2')).length === 1, { what: 'the run to start' });
    // SIGTERM first: the grace (300 ms), the abort and the hand-back happen while the successor boots.
    impatient.kill('SIGTERM');
    const successor = await startWorker('successor');
    expect(await impatient.exited).toEqual({ code: 0, signal: null });
    const [settledTimer] = await settled(['term:2']);
    expect(settledTimer).toMatchObject({ id: timer.id, status: 'completed', runCount: 2 });
    expect((await runsOf('term:2')).map(({ event, pid }) => ({ event, pid }))).toEqual([
      { event: 'started', pid: impatient.pid },
      { event: 'started', pid: successor.pid },
      { event: 'finished', pid: successor.pid },
    ]);
    successor.kill('SIGKILL');
    await successor.exited;
  }, 60_000);

  it('SIGKILL of a worker mid awaitTask:false run: at-least-once runs that tick again; at-most-once records it lost', async () => {
    const events: TimerEvent[] = [];
    const subscriber = new Redis(redis.url);
    subscriber.on('message', (_channel: string, message: string) =>
      events.push(JSON.parse(message) as TimerEvent),
    );
    await subscriber.subscribe('sundial:events');
    try {
      const doomed = await startWorker('free-doomed', SHORT_LEASE);
      const created = await client.scheduleMany(
        (['at-least-once', 'at-most-once'] as const).map((delivery) => ({
          key: `free:${delivery}`,
          handler: 'slow',
          // the doomed worker's runs outlast the test; every later run (a re-run, the next ticks) is quick
          payload: { ms: 120_000, rerunMs: 50 },
          every: 3000,
          awaitTask: false,
          delivery,
        })),
      );
      // Killed as soon as the first tick (v1, 120 s of work) of both runs on it — mid-run — and before a
      // survivor exists: the next ticks fall due every 3 s and are quick (runCount > 1), so a doomed worker
      // left alive while a survivor starts (seconds on a loaded host) finished some of them.
      await waitFor(
        async () => {
          const runs = await runsOf('free:');
          return created.every((timer) => runs.some((run) => run.id === timer.id && run.version === 1));
        },
        { what: 'both first ticks to start' },
      );
      doomed.kill('SIGKILL');
      await doomed.exited;
      // The runs the kill cut short: started there, never finished (a quick later tick it got to finish,
      // had this process stalled for seconds before the kill, is a run done, not one to recover).
      const doomedRuns = (await runsOf('free:')).filter((run) => run.pid === doomed.pid);
      const finished = (run: RunRecord) =>
        doomedRuns.some(
          (other) => other.event === 'finished' && other.id === run.id && other.version === run.version,
        );
      const onDoomed = doomedRuns.filter((run) => run.event === 'started' && !finished(run));
      const survivor = await startWorker('free-survivor');

      const [atLeastOnce, atMostOnce] = created;
      const rerunOf = (run: RunRecord) => async () =>
        (await runsOf('free:')).some(
          (other) =>
            other.pid === survivor.pid &&
            other.id === run.id &&
            other.version === run.version &&
            other.event === 'finished',
        );
      for (const run of onDoomed.filter((run) => run.id === atLeastOnce.id)) {
        await waitFor(rerunOf(run), { timeoutMs: 15_000, what: `a re-run of v${run.version}` });
      }
      for (const run of onDoomed.filter((run) => run.id === atMostOnce.id)) {
        const lost = await waitFor(
          () =>
            events.find(
              (event) => event.type === 'failed' && event.id === run.id && event.version === run.version,
            ),
          { timeoutMs: 15_000, what: `v${run.version} to be recorded lost` },
        );
        expect(lost.error).toMatchObject({ reason: 'lost' });
        expect(await rerunOf(run)()).toBe(false);
      }
      // the cadence went on meanwhile: the survivor ran later ticks of both
      await waitFor(async () => {
        const later = (await runsOf('free:')).filter((run) => run.pid === survivor.pid);
        return created.every((timer) => later.some((run) => run.id === timer.id));
      });
      expect(await client.cancelAll('free:')).toBe(2);
      survivor.kill('SIGKILL');
      await survivor.exited;
    } finally {
      await subscriber.quit();
    }
  }, 60_000);
});

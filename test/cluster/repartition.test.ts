import type { Timer, TimerSpec } from '@sundial/core';
import { RedisTimers, repartition, type RepartitionResult } from '@sundial/redis';
import {
  type AppProcess,
  clusterEnv,
  ensureBuilt,
  killAll,
  readRuns,
  type RedisServer,
  type RunRecord,
  spawnCluster,
  spawnRefused,
  startRedis,
  waitFor,
} from '@sundial/testing/harness';
import { Redis } from 'ioredis';

const TIMERS = 10_000;

/**
 * Issue 12 §4: 10,000 pending timers of every kind, firing, repartitioned from 1 to 4 partitions while
 * the old processes (count 1) run and new ones (count 4) join. Every live (id, version) runs once, none
 * early, nothing cancelled or paused runs; get and cancel work during and after; a process started with
 * the old count afterwards refuses to start.
 */
describe('cluster: repartition 1 → 4 while timers fire', () => {
  let redis: RedisServer;
  const apps: AppProcess[] = [];
  const clients: RedisTimers[] = [];
  let records: Redis;

  beforeAll(async () => {
    [redis] = await Promise.all([startRedis(), ensureBuilt()]);
    records = new Redis(`${redis.url}/1`);
  }, 180_000);

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.dispose()));
    records?.disconnect();
    await killAll(apps);
    await redis?.stop();
  });

  const open = (partitions: number) => {
    const client = new RedisTimers({ connection: redis.url, partitions });
    clients.push(client);
    return client;
  };

  it('moves 10,000 timers without losing, repeating or advancing a run', async () => {
    // The old processes look at the count every 250 ms, not 5 s: the test waits for their exits below.
    const oldEnv = clusterEnv(redis.url, { SUNDIAL_PARTITIONS: '1', SUNDIAL_LAYOUT_WATCH_MS: '250' });
    const old = await spawnCluster(oldEnv, 1, 2);
    apps.push(...old.schedulers, ...old.workers);
    const oldClient = open(1);

    const base = Date.now();
    const cronSeconds = [9_000, 12_000, 15_000].map((offset) => new Date(base + offset).getUTCSeconds());
    const specs = Array.from({ length: TIMERS }, (_, n) => spec(n, base, cronSeconds));
    const created: Timer[] = [];
    for (let i = 0; i < specs.length; i += 1000)
      created.push(...(await oldClient.scheduleMany(specs.slice(i, i + 1000))));
    const paused = created.filter((timer) => timer.key.startsWith('paused:'));
    await Promise.all(paused.map((timer) => oldClient.pause(timer.key)));

    // Runs have begun (intervals every 2–3 s, the first one-shots at 2 s): repartition now.
    await waitFor(async () => (await records.llen('runs')) > 100, {
      timeoutMs: 20_000,
      what: 'the first runs',
    });
    let joined: Promise<void> | undefined;
    let onFenced!: () => void;
    const fenced = new Promise<void>((resolve) => (onFenced = resolve));
    const moving = repartition({
      connection: redis.url,
      to: 4,
      onProgress: ({ phase }) => {
        if (phase !== 'fenced' || joined) return;
        // Processes with the new count may join as soon as the old count is fenced off.
        joined = spawnCluster(clusterEnv(redis.url, { SUNDIAL_PARTITIONS: '4' }), 1, 2).then((cluster) => {
          apps.push(...cluster.schedulers, ...cluster.workers);
        });
        onFenced();
      },
    });

    // During the repartition: a client with the new count reads and cancels; the old one is refused.
    await fenced;
    const newClient = open(4);
    const cancelled = created.filter((timer) => timer.key.startsWith('far:'));
    const sample = created.filter((timer) => timer.key.startsWith('late:')).slice(0, 200);
    const [cancels, reads, oldWrite] = await Promise.all([
      // A cancel that answered before its timer's due proves the timer never runs.
      Promise.all(
        cancelled.map(async (timer) => ({
          done: await newClient.cancel(timer.key),
          pending: Date.now() < timer.dueAt,
        })),
      ),
      Promise.all(sample.map((timer) => newClient.get(timer.key))),
      oldClient.schedule({ key: 'old:write', handler: 'record', delay: '1h' }).catch((error: Error) => error),
    ]);
    const result: RepartitionResult = await moving;
    await joined;
    expect(cancels.every(({ done }) => done)).toBe(true);
    expect(cancels.filter(({ pending }) => pending).length).toBeGreaterThan(0);
    expect(reads.map((timer) => timer?.id)).toEqual(sample.map((timer) => timer.id));
    expect(oldWrite).toMatchObject({
      reason: expect.stringMatching(/unavailable|invalid/),
      field: 'partitions',
    });
    expect(result).toMatchObject({ from: 1, to: 4 });
    expect(result.moved).toBeGreaterThan(1000);
    console.log(
      `repartition 1 → 4 of ${TIMERS} timers while firing: ${result.moved} keys moved in ${result.ms} ms`,
    );

    // After: a process started with the old count refuses to start; reads and writes find every key.
    const refused = await spawnRefused('worker', 'old-worker', oldEnv);
    expect(refused).toContain('spread over 4 partitions, and this process was started with 1');
    expect(refused).toContain('repartition');
    // The processes of the old count see their count replaced and shut down (Kubernetes would restart them).
    let exited = 0;
    for (const app of [...old.schedulers, ...old.workers]) void app.exited.then(() => exited++);
    await waitFor(() => exited === 3, { timeoutMs: 30_000, what: 'the old processes to shut down' });
    for (const app of [...old.schedulers, ...old.workers]) {
      expect(app.lines.join('\n')).toContain('SUNDIAL_PARTITIONS=4');
    }
    const after = open(4);
    expect((await after.get(paused[0].key))?.status).toBe('paused');
    expect(await after.cancel(paused[1].key)).toBe(true);
    expect(await after.get(cancelled[0].key)).toBeNull();

    // Every live timer runs as often as its schedule says, each (id, version) once, none early.
    const neverRun = new Set(
      [...cancelled.filter((_, i) => cancels[i].pending), ...paused].map((timer) => timer.id),
    );
    // (a cancel that answered after its due may have let one run happen: it is not counted, but checked above)
    const cancelledIds = new Set(cancelled.map((timer) => timer.id));
    const expected = new Map(
      created
        .filter((timer) => !cancelledIds.has(timer.id) && !neverRun.has(timer.id))
        .map((timer) => [timer.id, expectedRuns(timer)]),
    );
    const total = [...expected.values()].reduce((sum, runs) => sum + runs, 0);
    let all: RunRecord[] = [];
    let runs: RunRecord[] = [];
    await waitFor(
      async () => {
        // Each (id, version) counted below is a row of the list: until it holds `total`, reading and
        // parsing its ~15,000 rows every 250 ms (seconds of CPU beside the apps) could not succeed.
        if ((await records.llen('runs')) < total) return false;
        all = await readRuns(records);
        runs = all.filter((run) => !cancelledIds.has(run.id));
        return new Set(runs.map((run) => `${run.id}/${run.version}`)).size >= total;
      },
      { timeoutMs: 60_000, intervalMs: 250, what: `${total} runs` },
    );
    const seen = new Set<string>();
    const again: RunRecord[] = [];
    const perId = new Map<string, number>();
    for (const run of all) {
      expect({ run, early: run.at < run.due }).toEqual({ run, early: false });
      expect({ run, neverRun: neverRun.has(run.id) }).toEqual({ run, neverRun: false });
      if (seen.has(`${run.id}/${run.version}`)) again.push(run);
      else perId.set(run.id, (perId.get(run.id) ?? 0) + 1);
      seen.add(`${run.id}/${run.version}`);
    }
    // A run again is at-least-once's, and only where its worker was lost to it: the old workers shut down
    // when the count is replaced, and on a starved host a run's lease can end before its completion (CI
    // saw one). Its ledger must then say it was put back (`lost`, reason `requeued`).
    for (const run of again) {
      const ledger = await after.history(run.key);
      if (!ledger.some((entry) => entry.event === 'lost' && entry.reason === 'requeued')) {
        const runs = all.filter((other) => other.id === run.id);
        throw new Error(
          `${run.key} ran twice without being put back: runs ${JSON.stringify(runs)}, ledger ${JSON.stringify(ledger)}`,
        );
      }
    }
    const wrong = [...expected].filter(([id, count]) => perId.get(id) !== count);
    expect(
      wrong.slice(0, 5).map(([id, count]) => ({ id, expected: count, ran: perId.get(id) ?? 0 })),
    ).toEqual([]);
    expect(runs.length - again.filter((run) => !cancelledIds.has(run.id)).length).toBe(total);
    const kept = created.find((timer) => timer.key.startsWith('kept:'))!;
    expect((await after.get(kept.key))?.status).toBe('completed');
  }, 150_000);
});

/**
 * Timer n of the mix: one-shots due 2–14 s ahead (some kept when done), due 16–20 s (read during the
 * repartition) and due 60–70 s (cancelled during it), intervals (awaiting their runs, or not), crons,
 * paused intervals; both delivery modes.
 */
function spec(n: number, base: number, cronSeconds: number[]): TimerSpec {
  const handler = 'record';
  const delivery = n % 3 === 0 ? 'at-most-once' : 'at-least-once';
  const jitter = (ms: number) => (n * 7919) % ms;
  if (n < 4000) return { key: `once:${n}`, handler, delivery, delay: 2_000 + jitter(12_000) };
  if (n < 4500)
    return { key: `at:${n}`, handler, delivery, at: new Date(base + 3_000 + jitter(10_000)).toISOString() };
  if (n < 5000) return { key: `kept:${n}`, handler, delay: 2_000 + jitter(10_000), removeOnComplete: false };
  if (n < 5300) return { key: `late:${n}`, handler, delivery, delay: 16_000 + jitter(4_000) };
  if (n < 5500) return { key: `far:${n}`, handler, delivery, delay: 60_000 + jitter(10_000) };
  if (n < 7000) return { key: `every:${n}`, handler, delivery, every: 2_000 + jitter(1_000), maxRuns: 3 };
  if (n < 8000) return { key: `free:${n}`, handler, every: 2_000, awaitTask: false, maxRuns: 3 };
  if (n < 9000)
    return {
      key: `cron:${n}`,
      handler,
      delivery,
      cron: `${cronSeconds.join(',')} * * * * *`,
      tz: 'UTC',
      maxRuns: 2,
    };
  return { key: `paused:${n}`, handler, every: 30_000 };
}

function expectedRuns(timer: Timer): number {
  if (timer.kind === 'once') return 1;
  return timer.maxRuns ?? 0;
}

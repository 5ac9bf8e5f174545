import type { Timer, TimerSpec, TimersApi } from '@sundial/core';
import { RedisTimers } from '@sundial/redis';
import { Redis } from 'ioredis';
import {
  type AppProcess,
  clusterEnv,
  ensureBuilt,
  type HttpClient,
  keyPath,
  killAll,
  readRuns,
  type RunRecord,
  spawnCluster,
  waitFor,
} from '@sundial/testing/harness';

/** What a mutation did, and whether it provably landed while its timer was still pending. */
interface Mutation {
  old: Timer;
  kind: 'cancel' | 'replace' | 'reschedule';
  /** the entry the key holds afterwards (replace: the new one; reschedule: the moved one; a cancel that
   * found the timer ended: the old one, whose runs are counted as an untouched timer's) */
  now?: Timer;
  whilePending: boolean;
}

/** Where the suite runs: a Redis of some shape, and where the worker processes record their runs. */
export interface ExactlyOnceTarget {
  /** e.g. 'one Redis' */
  name: string;
  partitions: number;
  /** Starts Redis: the REDIS_URL of the apps and the client, a one-node URL for the run records. */
  start(): Promise<{ url: string; recordUrl: string; stop(): Promise<void> }>;
  /** Checks what the scheduled timers left in Redis, before any of them is due. */
  afterScheduled?(client: RedisTimers): Promise<void>;
}

/**
 * 2 scheduler + 3 worker processes on the target's Redis, 2,000 timers of every kind due within
 * seconds, ~10% cancelled, ~10% replaced, ~10% rescheduled while pending (through the in-test client
 * and both schedulers' HTTP APIs). Every live (id, version) must run exactly once, never before its due
 * time, and nothing cancelled or superseded may run. No worker dies here, so workers keep the default
 * 30 s lease: a worker stalled on a loaded machine must not look dead (its run would be claimed again).
 */
export function describeExactlyOnce(target: ExactlyOnceTarget): void {
  describe(`cluster: exactly once per (id, version) across processes, on ${target.name}`, () => {
    let redis: { url: string; recordUrl: string; stop(): Promise<void> } | undefined;
    let apps: AppProcess[] = [];
    let client: RedisTimers;
    let records: Redis;

    beforeAll(async () => {
      [redis] = await Promise.all([target.start(), ensureBuilt()]);
      const env = clusterEnv(redis.url, {
        SUNDIAL_PARTITIONS: String(target.partitions),
        SUNDIAL_TEST_RECORD_URL: redis.recordUrl,
      });
      const cluster = await spawnCluster(env, 2, 3);
      apps = [...cluster.schedulers, ...cluster.workers];
      client = new RedisTimers({ connection: redis.url, partitions: target.partitions });
      records = new Redis(redis.recordUrl);
    }, 180_000);

    afterAll(async () => {
      await client?.dispose();
      records?.disconnect();
      await killAll(apps);
      await redis?.stop();
    });

    it('runs every live (id, version) exactly once and nothing stale', async () => {
      const base = Date.now();
      const jitter = (ms: number) => Math.floor(Math.random() * ms);
      const cronSeconds = [9_000, 11_000, 13_000].map((offset) => new Date(base + offset).getUTCSeconds());
      const specs = new Map<string, TimerSpec>();
      for (let n = 0; n < 2000; n++) {
        const key = `c:${n}`;
        const handler = 'record';
        if (n < 800) specs.set(key, { key, handler, delay: 6_000 + jitter(3_000) });
        else if (n < 1200)
          specs.set(key, { key, handler, at: new Date(base + 8_000 + jitter(3_000)).toISOString() });
        else if (n < 1600) specs.set(key, { key, handler, every: 2_000 + jitter(1_000), maxRuns: 2 });
        // a seconds field: two of these three slots run (a third is there should one be skipped as overlap)
        else
          specs.set(key, { key, handler, cron: `${cronSeconds.join(',')} * * * * *`, tz: 'UTC', maxRuns: 2 });
      }
      const created = await client.scheduleMany([...specs.values()]);
      await target.afterScheduled?.(client);

      // Intervals run from 2 s on; mutate the once and cron timers, due 6 s or more after creation.
      const candidates = shuffle(created.filter((timer) => timer.kind !== 'interval'));
      const onceTimers = candidates.filter((timer) => timer.kind === 'once');
      const toReschedule = onceTimers.slice(0, 200);
      const others = candidates.filter((timer) => !toReschedule.includes(timer));
      const plan: [Timer, Mutation['kind']][] = shuffle([
        ...others.slice(0, 200).map((timer): [Timer, Mutation['kind']] => [timer, 'cancel']),
        ...others.slice(200, 400).map((timer): [Timer, Mutation['kind']] => [timer, 'replace']),
        ...toReschedule.map((timer): [Timer, Mutation['kind']] => [timer, 'reschedule']),
      ]);
      // One in five goes through HTTP, alternating between the two schedulers.
      const mutations = await Promise.all(
        plan.map(([timer, kind], n) =>
          mutate(
            n % 5 === 0 ? httpApi(apps[(n / 5) % 2].api) : clientApi(client),
            timer,
            kind,
            specs.get(timer.key)!,
          ),
        ),
      );
      const provenPending = mutations.filter((mutation) => mutation.whilePending).length;
      expect(provenPending).toBeGreaterThan(0);

      // The entries each key holds at the end, and those that must never run.
      const live = new Map(created.map((timer) => [timer.id, timer]));
      const neverRun = new Set<string>();
      const mayHaveRun = new Set<string>();
      for (const mutation of mutations) {
        if (mutation.kind !== 'reschedule') {
          live.delete(mutation.old.id);
          (mutation.whilePending ? neverRun : mayHaveRun).add(mutation.old.id);
        }
        if (mutation.now) live.set(mutation.now.id, mutation.now);
      }

      const expectedRuns = [...live.values()].reduce(
        (sum, timer) => sum + (timer.kind === 'once' ? 1 : 2),
        0,
      );
      let runs: RunRecord[] = [];
      await waitFor(
        async () => {
          if ((await client.snapshot()).length > 0) return false;
          runs = await readRuns(records);
          return runs.filter((run) => live.has(run.id)).length >= expectedRuns;
        },
        { timeoutMs: 60_000, intervalMs: 200, what: `${expectedRuns} runs and no live timer left` },
      );

      const byId = new Map<string, RunRecord[]>();
      const firstRuns = new Map<string, RunRecord>();
      for (const run of runs) {
        expect({ run, early: run.at < run.due }).toEqual({ run, early: false });
        const first = firstRuns.get(`${run.id}/${run.version}`);
        expect({ run, twice: first ? duplicateKind(first, run) : false }).toEqual({ run, twice: false });
        firstRuns.set(`${run.id}/${run.version}`, run);
        expect({ run, cancelledOrSuperseded: neverRun.has(run.id) }).toEqual({
          run,
          cancelledOrSuperseded: false,
        });
        byId.set(run.id, [...(byId.get(run.id) ?? []), run]);
      }
      for (const timer of live.values()) {
        const own = (byId.get(timer.id) ?? []).sort((a, b) => a.runCount - b.runCount);
        if (timer.kind === 'once') {
          expect({ key: timer.key, runs: own.map(({ version, due }) => ({ version, due })) }).toEqual({
            key: timer.key,
            runs: [{ version: timer.version, due: timer.dueAt }],
          });
          continue;
        }
        expect({ key: timer.key, runCounts: own.map((run) => run.runCount) }).toEqual({
          key: timer.key,
          runCounts: [1, 2],
        });
        expect(own[1].due).toBeGreaterThan(own[0].due);
        for (const run of own) {
          if (timer.kind === 'interval') expect((run.due - timer.scheduledAt) % timer.everyMs!).toBe(0);
          else expect(cronSeconds).toContain(new Date(run.due).getUTCSeconds());
        }
      }
      // A superseded entry mutated too late to prove it pending ran at most once (each version once).
      for (const id of mayHaveRun) expect((byId.get(id) ?? []).length).toBeLessThanOrEqual(2);
      expect(runs.filter((run) => live.has(run.id))).toHaveLength(expectedRuns);
    }, 120_000);
  });
}

/**
 * Applies one mutation and says whether it provably landed while the timer was pending: a reschedule
 * proves it by succeeding (refused while running, not-found once run); a cancel or replace by landing
 * before the timer's first due time (Redis and this process share the machine clock).
 */
async function mutate(
  api: MutationApi,
  old: Timer,
  kind: Mutation['kind'],
  spec: TimerSpec,
): Promise<Mutation> {
  if (kind === 'reschedule') {
    const moved = await api.reschedule(old.key, 3_000 + Math.floor(Math.random() * 4_000));
    return moved ? { old, kind, now: moved, whilePending: true } : { old, kind, whilePending: false };
  }
  const firstDue = old.dueAt;
  if (kind === 'cancel') {
    if (await api.cancel(old.key)) return { old, kind, whilePending: Date.now() < firstDue };
    // No live timer: it had ended on its own first (a one-shot run, a cron's maxRuns reached; a host slow
    // enough that the mutations came after its dues). It stays in the tally: its runs are checked in full.
    expect(Date.now()).toBeGreaterThanOrEqual(firstDue);
    return { old, kind, now: old, whilePending: false };
  }
  const replacement = await api.schedule({ ...spec, ifExists: 'replace' });
  expect(replacement.id).not.toBe(old.id);
  return { old, kind, now: replacement, whilePending: Date.now() < firstDue };
}

/**
 * Names a second run of one (id, version). A new runCount is a claim taken over after the first claim's
 * lease expired: at-least-once redelivery, which only a worker that died (or stalled longer than its
 * lease) may cause. The same runCount twice would be one claim run twice: a bug whatever the timing.
 */
function duplicateKind(...pair: [RunRecord, RunRecord]): string {
  // In claim order: a stalled worker may record its run after the run that took over from it.
  const [first, second] = pair.sort((a, b) => a.runCount - b.runCount);
  const runs = `runCount ${first.runCount} (pid ${first.pid}, at ${first.at}), then runCount ${second.runCount} (pid ${second.pid}, at ${second.at})`;
  return first.runCount === second.runCount
    ? `a true duplicate of the same claim: ${runs}`
    : `a re-claim after lease expiry, though no worker died (a worker stalled past its lease?): ${runs}`;
}

/** The three operations the test mutates with, over the client library or over HTTP. */
type MutationApi = Pick<TimersApi, 'cancel' | 'schedule'> & {
  /** the moved timer, or null when refused because it is running or already ran */
  reschedule(key: string, delayMs: number): Promise<Timer | null>;
};

function clientApi(timers: TimersApi): MutationApi {
  return {
    cancel: (key) => timers.cancel(key),
    schedule: (spec) => timers.schedule(spec),
    reschedule: (key, delay) =>
      timers.reschedule(key, { delay }).catch((error: { reason?: string }) => {
        if (error.reason === 'inactive' || error.reason === 'not-found') return null;
        throw error;
      }),
  };
}

function httpApi(api: HttpClient): MutationApi {
  return {
    cancel: async (key) =>
      (await api<{ cancelled: boolean }>('DELETE', keyPath(key))).body.cancelled === true,
    schedule: async (spec) => {
      const reply = await api<Timer>('POST', '/v1/timers', spec);
      expect(reply.status).toBe(201);
      return reply.body;
    },
    reschedule: async (key, delay) => {
      const reply = await api<Timer>('POST', `${keyPath(key)}/reschedule`, { delay });
      if (reply.status === 409 || reply.status === 404) return null;
      expect(reply.status).toBe(200);
      return reply.body;
    },
  };
}

function shuffle<T>(items: T[]): T[] {
  return items
    .map((item) => ({ item, order: Math.random() }))
    .sort((a, b) => a.order - b.order)
    .map(({ item }) => item);
}

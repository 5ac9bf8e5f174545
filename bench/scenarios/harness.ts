import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { BenchRedis } from '../bench-redis';
import type { BenchSizes } from '../config';
import type { Contender, ContenderFactory, OneShot } from '../contenders/contender';
import { redisDiagnostics, startRedisDiagnostics, watchEventLoop } from '../diagnostics';
import { Fleet } from '../processes/fleet';
import type { RunRecord } from '../processes/protocol';
import type { LatenessSeries, Row } from '../report';
import { percentile, ratePerSecond } from '../stats';

export interface BenchContext {
  redis: BenchRedis;
  sizes: BenchSizes;
  contenders: readonly ContenderFactory[];
  /** Sundial variants the fire-path scenarios measure too (FIRE_PATH_VARIANTS) */
  variants: readonly ContenderFactory[];
  log(line: string): void;
}

export interface ScenarioResult {
  rows: Row[];
  lateness?: LatenessSeries[];
  details?: unknown;
}

export type Scenario = (context: BenchContext) => Promise<ScenarioResult>;

/** Runs `body` for one contender on an empty Redis, with no child processes; closes the contender after. */
export async function onCleanRedis<T>(
  context: BenchContext,
  factory: ContenderFactory,
  body: (contender: Contender) => Promise<T>,
): Promise<T> {
  await context.redis.flush();
  const contender = factory(context.redis.url);
  const loop = watchEventLoop();
  try {
    return await body(contender);
  } finally {
    const delay = loop.stop();
    if (delay) context.log(`${contender.name} bench process: ${delay}`);
    await contender.close();
  }
}

/** With BENCH_DIAG=1: logs what Redis spent its time on while `body` ran (bench/diagnostics.ts). */
export async function diagnosed<T>(context: BenchContext, label: string, body: () => Promise<T>): Promise<T> {
  await startRedisDiagnostics(context.redis.admin);
  const result = await body();
  for (const line of await redisDiagnostics(context.redis.admin)) context.log(`${label} ${line}`);
  return result;
}

/**
 * Like onCleanRedis, plus the contender's services and `workers` worker processes (a count, or the count
 * and `claims`: their runs carry their claim instants, ChildConfig).
 */
export function withWorkers<T>(
  context: BenchContext,
  factory: ContenderFactory,
  workers: number | { processes: number; claims: boolean },
  body: (contender: Contender, fleet: Fleet) => Promise<T>,
): Promise<T> {
  const { processes, claims } = typeof workers === 'number' ? { processes: workers, claims: false } : workers;
  return onCleanRedis(context, factory, async (contender) => {
    const fleet = await Fleet.start(
      context.redis.url,
      [
        ...contender.serviceRoles.map((role) => ({ role, count: 1 })),
        { role: contender.workerRole, count: processes },
      ],
      { concurrency: context.sizes.concurrency, partitions: contender.partitions, claims },
    );
    try {
      return await body(contender, fleet);
    } finally {
      await fleet.stop();
    }
  });
}

/** `count` one-shots `<prefix><i>`, the i-th due at `dueAt(i)`. Keys use '.' since BullMQ ids forbid ':'. */
export function oneShots(prefix: string, count: number, dueAt: (index: number) => number): OneShot[] {
  return Array.from({ length: count }, (_, i) => ({ key: `${prefix}${i}`, dueAt: dueAt(i) }));
}

/** Schedules in sequential batches (scheduleMany / addBulk), as a caller with a backlog would. */
export async function scheduleInBatches(
  contender: Contender,
  timers: readonly OneShot[],
  batchSize: number,
): Promise<void> {
  for (let i = 0; i < timers.length; i += batchSize) {
    await contender.scheduleMany(timers.slice(i, i + batchSize));
  }
}

/**
 * A full garbage collection of the bench process now, before a measured window: what setting the run up
 * left behind (scheduling the timers, the contender before) is not collected by a mark-compact pause
 * inside the window, which would hold up whichever calls are in flight, on either side.
 */
export function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

export function sleepUntil(epochMs: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, epochMs - Date.now())));
}

/** How long to leave before the first due so scheduling `count` timers (at ≥ 10k/s) finishes in time. */
export function leadTimeMs(count: number): number {
  return 1_000 + Math.ceil(count / 10);
}

/** How many runs reported more than once for the same (key, due): must be 0 on both sides. */
export function duplicateRuns(runs: readonly RunRecord[]): number {
  const seen = new Set<string>();
  let duplicates = 0;
  for (const [key, due] of runs) {
    const id = `${key}@${due}`;
    if (seen.has(id)) duplicates++;
    else seen.add(id);
  }
  return duplicates;
}

/**
 * Runs per second a backlog was drained at: the middle 80 % of runs over the time between the 10th and
 * 90th percentile start, which leaves out the ramp-up and the tail.
 */
export function sustainedRate(runs: readonly RunRecord[]): number {
  const starts = Array.from(Float64Array.from(runs.map(([, , start]) => start)).sort());
  return ratePerSecond(Math.round(starts.length * 0.8), percentile(starts, 90) - percentile(starts, 10));
}

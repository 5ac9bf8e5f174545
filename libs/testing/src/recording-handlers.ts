import { trace } from '@opentelemetry/api';
import type { JsonValue, TimerContext, TimerHandler } from '@sundial/core';
import { Redis } from 'ioredis';

/**
 * Test handlers loaded into worker processes through SUNDIAL_HANDLERS_MODULE. Each run appends a JSON
 * record to the list `RUNS_KEY` in the Redis (database) named by SUNDIAL_TEST_RECORD_URL, stamped with
 * Date.now() — the same machine clock as the private Redis whose TIME sets the due times.
 */
export const RUNS_KEY = 'runs';

export interface RunRecord {
  event: 'started' | 'finished';
  id: string;
  key: string;
  version: number;
  due: number;
  runCount: number;
  at: number;
  /** when the claim took the run, on the Redis clock (`ctx.claimedAt`) */
  claimedAt: number | null;
  pid: number;
}

let client: Redis | undefined;

function recorder(): Redis {
  const url = process.env.SUNDIAL_TEST_RECORD_URL;
  if (!url) throw new Error('SUNDIAL_TEST_RECORD_URL is not set');
  client ??= new Redis(url);
  return client;
}

async function record(event: RunRecord['event'], ctx: TimerContext): Promise<void> {
  const entry: RunRecord = {
    event,
    id: ctx.id,
    key: ctx.key,
    version: ctx.version,
    due: ctx.due,
    runCount: ctx.runCount,
    at: Date.now(),
    claimedAt: ctx.claimedAt,
    pid: process.pid,
  };
  await recorder().rpush(RUNS_KEY, JSON.stringify(entry));
}

/** How often a gated run looks for its release key. */
const RELEASE_POLL_MS = 25;

/**
 * Resolves after `ms`, or at once when the run is aborted — also when it was before this began: an
 * AbortSignal already aborted fires no 'abort' event, and a cancel that reached the worker while the
 * handler recorded its start (or before the run began: docs/spec.md §4.5) left a 20 s `slow` run going
 * its whole 20 s on a loaded host (test/cluster/tracing.test.ts's cancelled run, its span 20 s late).
 */
export function work(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

export const handlers: Record<string, TimerHandler> = {
  /** records its start */
  record: (_payload: JsonValue, ctx: TimerContext) => record('started', ctx),
  /** records its start inside a span of its own (`test.handler`): a child of the run's span when traced */
  traced: (_payload: JsonValue, ctx: TimerContext) =>
    trace.getTracer('sundial-test').startActiveSpan('test.handler', async (span) => {
      span.setAttribute('sundial.key', ctx.key);
      await record('started', ctx);
      span.end();
    }),
  /**
   * records its start, works `payload.ms` (`payload.rerunMs` when the run is a re-run after a lost
   * worker), then records that it finished — or throws if its signal aborted first
   */
  slow: async (payload: JsonValue, ctx: TimerContext) => {
    await record('started', ctx);
    const { ms = 1000, rerunMs = ms } = (payload ?? {}) as { ms?: number; rerunMs?: number };
    await work(ctx.runCount > 1 ? rerunMs : ms, ctx.signal);
    if (ctx.signal.aborted) throw new Error('aborted');
    await record('finished', ctx);
  },
  /**
   * records its start, works until the test sets the key `payload.release` in the record database (or
   * throws if its signal aborted first), then records that it finished: a run that ends when the test
   * says, where a guessed while could end before the test's next step on a loaded machine
   */
  gated: async (payload: JsonValue, ctx: TimerContext) => {
    await record('started', ctx);
    const { release } = (payload ?? {}) as { release?: string };
    if (!release) throw new Error('the gated handler needs payload.release, the key that ends its run');
    while (!ctx.signal.aborted && (await recorder().exists(release)) === 0) {
      await work(RELEASE_POLL_MS, ctx.signal);
    }
    if (ctx.signal.aborted) throw new Error('aborted');
    await record('finished', ctx);
  },
};

export async function readRuns(redis: Redis): Promise<RunRecord[]> {
  return (await redis.lrange(RUNS_KEY, 0, -1)).map((line) => JSON.parse(line) as RunRecord);
}

import { hostname } from 'node:os';
import { refusals, type SundialLogger } from '@sundial/core';
import type { RedisClient } from '../infra/connection';
import type { SundialKeys } from '../store/keys';

// Why a file of its own: a timer fires only where a dispatcher hands it off, and a prefix without one
// fails nothing and logs nothing (its timers just stay pending): the dispatchers say they run, cheaply,
// and the runners say when none has (docs/spec.md §4.2).

/**
 * How often a dispatcher says it runs: at the end of a pass, at most this often, one SET (not per fired
 * timer: at 1,000 timers/s, 0.0003 commands per timer).
 */
const ANNOUNCE_EVERY_MS = 3_000;
/** How long one announcement lasts (the key's TTL): four missed in a row before the key is gone. */
const ANNOUNCED_FOR_MS = 15_000;
/** How often a runner looks: one EXISTS, at the cadence of the apps' layout watch. */
const LOOK_EVERY_MS = 5_000;
/**
 * How long a runner lets pass with no dispatcher seen before it warns (`dispatcherGraceMs`): at a
 * cluster's start the dispatcher may come up after the workers.
 */
export const DEFAULT_DISPATCHER_GRACE_MS = 15_000;

/** The least grace: the looks, a third of it apart, stay 100 ms or more apart. */
const MIN_DISPATCHER_GRACE_MS = 300;

/** `dispatcherGraceMs` as given (default DEFAULT_DISPATCHER_GRACE_MS), or the `invalid` refusal. */
export function dispatcherGraceOf(value: unknown): number {
  if (value === undefined) return DEFAULT_DISPATCHER_GRACE_MS;
  if (Number.isSafeInteger(value) && (value as number) >= MIN_DISPATCHER_GRACE_MS) return value as number;
  throw refusals.invalid(
    'dispatcherGraceMs',
    `dispatcherGraceMs ${JSON.stringify(value) ?? String(value)} is not an integer of at least ${MIN_DISPATCHER_GRACE_MS} (ms the runner lets pass with no dispatcher seen before it warns).`,
    `Write dispatcherGraceMs as an integer of at least ${MIN_DISPATCHER_GRACE_MS}, or leave it out for the default (${DEFAULT_DISPATCHER_GRACE_MS}).`,
  );
}

/** The dispatcher's side: `P:dispatcher` set to its id with a TTL, every few seconds at most. */
export class DispatcherAnnouncer {
  private readonly id = `${hostname()}-${process.pid}`;
  private lastAt = -Infinity;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: SundialKeys,
  ) {}

  /**
   * At the dispatcher's start, awaited: a started dispatcher is present at once (a cluster's keyspace is
   * then the same before and after its first pass, and the runners' first look already finds it).
   */
  async start(): Promise<void> {
    this.lastAt = performance.now();
    await this.redis.set(this.keys.dispatcherSeen, this.id, 'PX', ANNOUNCED_FOR_MS);
  }

  /** Called after each pass that took from Redis; not awaited, a failure is the next one's to retry. */
  announce(): void {
    const now = performance.now();
    if (now - this.lastAt < ANNOUNCE_EVERY_MS) return;
    this.lastAt = now;
    this.redis.set(this.keys.dispatcherSeen, this.id, 'PX', ANNOUNCED_FOR_MS).catch(() => {
      this.lastAt = -Infinity;
    });
  }
}

export interface PresenceWatchOptions {
  redis: RedisClient;
  keys: SundialKeys;
  logger: SundialLogger;
  /** what the warn line tells to do, for the process's context */
  fix: string;
  /** dispatcherGraceOf's; the looks come every third of it, at most every 5 s */
  graceMs: number;
  fields?: Record<string, unknown>;
}

/**
 * The runner's side: from its start, every 5 s, one EXISTS of `P:dispatcher`. Missing once the runner
 * has run for the grace (so no announcement for 15 s): one warn line naming the prefix and the fix;
 * seen again after that: one info line. A failed look (Redis away) says nothing.
 */
export class DispatcherPresenceWatch {
  private timer: NodeJS.Timeout | undefined;
  private warned = false;

  constructor(private readonly options: PresenceWatchOptions) {}

  start(): void {
    const { graceMs } = this.options;
    const startedAt = performance.now();
    this.timer = setInterval(
      () => void this.look(performance.now() - startedAt >= graceMs),
      Math.min(LOOK_EVERY_MS, graceMs / 3),
    );
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async look(pastGrace: boolean): Promise<void> {
    const { redis, keys, logger, fix, fields } = this.options;
    const seen = await redis.exists(keys.dispatcherSeen).then(
      (count) => count > 0,
      () => null,
    );
    if (seen === null) return;
    const prefix = keys.prefix;
    if (!seen && pastGrace && !this.warned) {
      this.warned = true;
      logger.warn(
        `No Sundial dispatcher has run for prefix '${prefix}' for ${ANNOUNCED_FOR_MS / 1000} s: due timers stay pending and reach no worker until one runs`,
        { ...fields, prefix, fix },
      );
    } else if (seen && this.warned) {
      this.warned = false;
      logger.info(`A Sundial dispatcher runs again for prefix '${prefix}': due timers reach the workers`, {
        ...fields,
        prefix,
      });
    }
  }
}

/** The warn line's fix, for a runner the Nest module feeds (`external`) or one of a plain service (`own`). */
export function noDispatcherFix(prefix: string, consumers: 'own' | 'external'): string {
  const scheduler = `deploy the scheduler (apps/scheduler, at least one replica) with SUNDIAL_PREFIX=${prefix}`;
  return consumers === 'external'
    ? `${scheduler[0].toUpperCase()}${scheduler.slice(1)}, or in an app of this prefix pass dispatch: true to SundialWorkerModule.forRoot.`
    : `Construct and start a Dispatcher for prefix '${prefix}' in this service beside the TimerRunner (docs/spec.md §5.5), or ${scheduler}.`;
}

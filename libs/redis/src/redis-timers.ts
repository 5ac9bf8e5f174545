import {
  DEFAULT_TOMBSTONE_MS,
  type ListOptions,
  type ListResult,
  type NormalizedSpec,
  type RescheduleWhen,
  type Timer,
  type TimerEventName,
  type TimerKind,
  type TimerListener,
  type TimersApi,
  type TimerSpec,
  type TimerStatus,
  type ValidationLimits,
  nextCronOccurrence,
  normalizeSpec,
  normalizeWhen,
  validateKey,
  validateScope,
} from '@sundial/core';
import { type EngineLogger, jsonConsoleLogger } from '@sundial/core/engine/logger';
import { type Redis, ReplyError } from 'ioredis';
import { ClusterClock } from './cluster-clock';
import { isConnectionFailure } from './connection-failure';
import { EventSubscriber } from './event-subscriber';
import { SundialKeys } from './keys';
import { refusals } from './refusals';
import { createdTimer, decodeRow, encodeSpecFields, fieldsFromFlat, type RowFields } from './row';
import { closeRedis, openRedis, type RedisConnection, withErrorListener } from './redis-connection';
import { defineCommands, runScript } from './scripts';

/** Told what the client changed, e.g. to feed metrics (SPEC §6). */
export interface RedisTimersObserver {
  /** a timer created or replaced (not one kept by ifExists 'keep') */
  scheduled(kind: TimerKind): void;
  /** timers cancelled by cancel or cancelAll */
  cancelled(count: number): void;
}

export interface RedisTimersOptions {
  /** A redis:// or rediss:// URL, or ioredis options. */
  connection: RedisConnection;
  prefix?: string;
  partitions?: number;
  limits?: Partial<ValidationLimits>;
  /** How long a cancelled key stays cancelled for `ifExists: 'keep'` (default 7 days). */
  tombstoneMs?: number;
  /** Keys cancelled per Lua call by `cancelAll` (default 100): bounds how long one script holds Redis. */
  cancelBatch?: number;
  logger?: EngineLogger;
  observer?: RedisTimersObserver;
}

const DEFAULT_CANCEL_BATCH = 100;
/** cancel-all calls in flight per partition: Redis never waits for the client between batches. */
const CANCEL_ALL_IN_FLIGHT = 4;
/** Specs per schedule call (~1 ms of Redis each); a batch's calls are all sent at once. */
const SCHEDULE_BATCH = 100;
const DEFAULT_LIST_LIMIT = 100;
const MAX_LIST_LIMIT = 1000;
/** A cron script refuses an occurrence that is not after Redis now; this many fresh tries always suffice. */
const MAX_CLOCK_RETRIES = 5;
const STATUSES: readonly TimerStatus[] = ['pending', 'running', 'paused', 'completed', 'failed', 'cancelled'];

type ScriptReply = { code: string; fields: Record<string, string> };

/**
 * The Timers API over Redis (SPEC §5.1): every state change is one Lua script of ./commands; reads go
 * straight to the row hashes and indexes. Runs happen elsewhere (the fire path).
 */
export class RedisTimers implements TimersApi {
  readonly keys: SundialKeys;
  private readonly redis: Redis;
  private readonly events: EventSubscriber;
  private readonly tombstoneMs: number;
  private readonly cancelBatch: number;
  private readonly logger: EngineLogger;
  /** Crons are computed in JS from (an estimate of) Redis now. */
  private readonly clock: ClusterClock;
  private started: Promise<void> | undefined;
  private disposed = false;

  constructor(private readonly options: RedisTimersOptions) {
    this.keys = new SundialKeys(options.prefix, options.partitions);
    this.tombstoneMs = options.tombstoneMs ?? DEFAULT_TOMBSTONE_MS;
    this.cancelBatch = options.cancelBatch ?? DEFAULT_CANCEL_BATCH;
    this.logger = options.logger ?? jsonConsoleLogger;
    // One retry per command: a Redis outage surfaces as 'unavailable' quickly instead of hanging.
    // ioredis waits disconnectTimeout for a socket that already closed: keep that wait short.
    this.redis = openRedis(options.connection, { maxRetriesPerRequest: 1, disconnectTimeout: 100 });
    this.redis.on('error', () => undefined); // surfaced per call as 'unavailable'
    defineCommands(this.redis);
    this.clock = new ClusterClock(this.redis);
    this.events = new EventSubscriber(
      () => withErrorListener(this.redis.duplicate()),
      this.keys.eventsChannel,
      this.logger,
    );
  }

  schedule(spec: TimerSpec): Promise<Timer> {
    return this.call(async () => (await this.scheduleNormalized([this.normalize(spec)]))[0]);
  }

  scheduleMany(specs: TimerSpec[]): Promise<Timer[]> {
    return this.call(async () => {
      if (!Array.isArray(specs)) {
        throw refusals.invalid(
          'specs',
          'scheduleMany expects an array of timer specs.',
          'Pass an array, e.g. [spec1, spec2].',
        );
      }
      return this.scheduleNormalized(specs.map((spec) => this.normalize(spec)));
    });
  }

  cancel(key: string): Promise<boolean> {
    return this.call(async () => {
      validateKey(key);
      const base = this.keys.base(this.keys.partitionOf(key));
      const cancelled =
        (await runScript(this.redis, 'cancel', base, this.keys.prefix, this.tombstoneMs, key)) === 1;
      if (cancelled) this.options.observer?.cancelled(1);
      return cancelled;
    });
  }

  cancelAll(scope?: string): Promise<number> {
    return this.call(async () => {
      const prefix = validateScope(scope);
      const reason = prefix ? 'cancelled' : 'reset';
      const done = await Promise.all(this.keys.all().map((n) => this.cancelAllIn(n, prefix, reason)));
      const count = done.reduce((sum, { cancelled }) => sum + cancelled, 0);
      this.options.observer?.cancelled(count);
      if (!prefix) {
        const now = Math.max(...done.map(({ at }) => at));
        const reset = { type: 'reset', id: '', key: '', version: 0, kind: null, at: now, count };
        await this.redis.publish(this.keys.eventsChannel, JSON.stringify(reset));
      }
      return count;
    });
  }

  /**
   * Cancels a scope in one partition, CANCEL_ALL_IN_FLIGHT batches sent at a time (each call takes the
   * first keys still indexed, so they never overlap) until a round's last call says nothing is left.
   */
  private async cancelAllIn(
    partition: number,
    scope: string,
    reason: string,
  ): Promise<{ cancelled: number; at: number }> {
    const base = this.keys.base(partition);
    let cancelled = 0;
    let at = 0;
    for (let more = true; more;) {
      const round = await Promise.all(
        Array.from(
          { length: CANCEL_ALL_IN_FLIGHT },
          async () =>
            (await runScript(
              this.redis,
              'cancel-all',
              base,
              this.keys.prefix,
              this.tombstoneMs,
              scope,
              this.cancelBatch,
              reason,
            )) as [number, number, string],
        ),
      );
      for (const [count, , now] of round) {
        cancelled += count;
        at = Math.max(at, Number(now));
      }
      more = round[round.length - 1][1] === 1;
    }
    return { cancelled, at };
  }

  reschedule(key: string, when: RescheduleWhen): Promise<Timer> {
    return this.call(async () => {
      validateKey(key);
      const target = normalizeWhen(when);
      const [mode, ms] = 'delayMs' in target ? ['delay', target.delayMs] : ['at', target.atMs];
      return this.expectTimer(key, 'reschedule', await this.run(key, 'reschedule', key, mode, ms));
    });
  }

  pause(key: string): Promise<Timer> {
    return this.call(async () => {
      validateKey(key);
      return this.expectTimer(key, 'pause', await this.run(key, 'pause', key));
    });
  }

  resume(key: string): Promise<Timer> {
    return this.call(async () => {
      validateKey(key);
      const [cron, tz] = await this.redis.hmget(this.keys.row(key), 'cr', 'tz');
      const [reply] = await this.withRedisNow(async (now) => [
        await this.run(key, 'resume', key, cron && tz ? nextCronOccurrence(cron, tz, now) : ''),
      ]);
      return this.expectTimer(key, 'resume', reply);
    });
  }

  trigger(key: string): Promise<Timer> {
    return this.call(async () => {
      validateKey(key);
      return this.expectTimer(key, 'trigger', await this.run(key, 'trigger', key));
    });
  }

  get(key: string): Promise<Timer | null> {
    return this.call(async () => {
      validateKey(key);
      const fields = await this.redis.hgetall(this.keys.row(key));
      return fields.id === undefined ? null : decodeRow({ ...fields, key });
    });
  }

  /**
   * Walks the lex index partition by partition (keys sorted within a partition). The cursor is opaque:
   * base64url of `[partition, last key returned]`.
   */
  list(options: ListOptions = {}): Promise<ListResult> {
    return this.call(async () => {
      const { status } = options;
      const prefix = validateScope(options.prefix);
      if (status !== undefined && !STATUSES.includes(status)) {
        throw refusals.invalid(
          'status',
          `Unknown status ${JSON.stringify(status)}.`,
          `Use one of ${STATUSES.join(', ')}.`,
        );
      }
      const limit = this.listLimit(options.limit);
      let [partition, after] = this.decodeCursor(options.cursor);
      const items: Timer[] = [];
      const max = prefix ? `(${prefix}\xff` : '+';
      while (partition < this.keys.partitions) {
        const min = after !== null ? `(${after}` : prefix ? `[${prefix}` : '-';
        const keys = await this.redis.zrangebylex(this.keys.keys(partition), min, max, 'LIMIT', 0, limit);
        const rows = await this.readRows(keys);
        for (let i = 0; i < keys.length; i++) {
          after = keys[i];
          const timer = rows[i];
          if (timer && (status === undefined || timer.status === status)) items.push(timer);
          if (items.length === limit) return { items, nextCursor: this.encodeCursor(partition, after) };
        }
        if (keys.length < limit) [partition, after] = [partition + 1, null];
      }
      return { items, nextCursor: null };
    });
  }

  check(id: string): Promise<boolean> {
    return this.call(async () => {
      const partition = typeof id === 'string' ? this.keys.partitionOfId(id) : null;
      return partition !== null && (await this.redis.hexists(this.keys.ids(partition), id)) === 1;
    });
  }

  snapshot(): Promise<string[]> {
    return this.call(async () => {
      const perPartition = await Promise.all(this.keys.all().map((n) => this.redis.hkeys(this.keys.ids(n))));
      return perPartition.flat();
    });
  }

  on(event: TimerEventName, listener: TimerListener): () => void {
    if (this.disposed) throw refusals.disposed();
    return this.events.on(event, listener);
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    this.events.emitLocal({ type: 'disposed', id: '', key: '', version: 0, kind: null, at: Date.now() });
    await this.events.close();
    await closeRedis(this.redis);
  }

  private normalize(spec: TimerSpec): NormalizedSpec {
    return normalizeSpec(spec, this.options.limits);
  }

  /** Every public call: refused after dispose, started once, Redis connection failures → 'unavailable'. */
  private async call<T>(operation: () => Promise<T>): Promise<T> {
    if (this.disposed) throw refusals.disposed();
    try {
      await this.connect();
      await this.events.ready();
      return await operation();
    } catch (error) {
      throw isConnectionFailure(error) ? refusals.unavailable(error) : error;
    }
  }

  /**
   * Once per client, before its first call (a service calls it at start): warns when Redis may evict
   * timers (`maxmemory-policy` other than `noeviction`) and learns the Redis clock. A failure is retried.
   */
  connect(): Promise<void> {
    this.started ??= (async () => {
      await this.warnUnlessNoEviction();
      await this.clock.sync();
    })().catch((error: unknown) => {
      this.started = undefined;
      throw error;
    });
    return this.started;
  }

  private async warnUnlessNoEviction(): Promise<void> {
    try {
      const [, policy] = (await this.redis.config('GET', 'maxmemory-policy')) as string[];
      if (policy && policy !== 'noeviction') {
        this.logger.warn(
          `Redis maxmemory-policy is '${policy}': under memory pressure Redis may evict timers. Set it to 'noeviction'.`,
        );
      }
    } catch (error) {
      if (!(error instanceof ReplyError)) throw error; // CONFIG may be disabled on managed Redis: skip the check
    }
  }

  /**
   * Runs `attempt` with the best estimate of Redis now; when the script answers 'retry' (the estimate was
   * behind, so a cron occurrence was not in the future; the call changed nothing) it tries again from
   * the Redis now it reported.
   */
  private async withRedisNow(attempt: (now: number) => Promise<ScriptReply[]>): Promise<ScriptReply[]> {
    let now = this.clock.now();
    for (let tries = 1; tries <= MAX_CLOCK_RETRIES; tries++) {
      const replies = await attempt(now);
      if (replies[0]?.code !== 'retry') return replies;
      now = Math.max(Number(replies[0].fields.now), now + 1);
      await this.clock.sync(1); // the offset drifted: measure it again for the next calls
    }
    throw new Error(`Redis kept answering 'retry' to cron occurrences computed from its own clock`);
  }

  private async scheduleNormalized(specs: NormalizedSpec[]): Promise<Timer[]> {
    const calls = this.scheduleCalls(specs);
    if (calls.length > 1) await this.refuseDuplicates(specs);
    const timers: Timer[] = new Array<Timer>(specs.length);
    // Every call is sent at once: Redis runs one while the next is being encoded.
    await Promise.all(
      calls.map(async ({ partition, indexes }) => {
        const created = await this.schedulePartition(
          partition,
          indexes.map((i) => specs[i]),
        );
        created.forEach((timer, j) => (timers[indexes[j]] = timer));
      }),
    );
    return timers;
  }

  /** One script call per partition and per SCHEDULE_BATCH specs, so no single call holds Redis for long. */
  private scheduleCalls(specs: NormalizedSpec[]): { partition: number; indexes: number[] }[] {
    return [...this.byPartition(specs)].flatMap(([partition, indexes]) =>
      Array.from({ length: Math.ceil(indexes.length / SCHEDULE_BATCH) }, (_, n) => ({
        partition,
        indexes: indexes.slice(n * SCHEDULE_BATCH, (n + 1) * SCHEDULE_BATCH),
      })),
    );
  }

  /** partition → indexes of its specs, in order. */
  private byPartition(specs: NormalizedSpec[]): Map<number, number[]> {
    const byPartition = new Map<number, number[]>();
    specs.forEach((spec, index) => {
      const partition = this.keys.partitionOf(spec.key);
      const indexes = byPartition.get(partition);
      if (indexes) indexes.push(index);
      else byPartition.set(partition, [index]);
    });
    return byPartition;
  }

  /**
   * Each script refuses duplicates atomically, but only within its call: before a batch that needs
   * several calls, look for a duplicate anywhere (live in Redis, or repeated in the batch) so a refused
   * batch changes nothing — schedule calls with the keys as guards and no spec, as bounded as the writes.
   * (A concurrent writer can still win the race between check and write.)
   */
  private async refuseDuplicates(specs: NormalizedSpec[]): Promise<void> {
    const seen = new Set<string>();
    for (const spec of specs) {
      if (spec.ifExists === 'error' && seen.has(spec.key)) throw refusals.duplicateKey(spec.key);
      seen.add(spec.key);
    }
    const strict = specs.filter((spec) => spec.ifExists === 'error');
    const replies = await Promise.all(
      this.scheduleCalls(strict).map(async ({ partition, indexes }) => {
        const guards = indexes.map((i) => strict[i].key);
        const raw = await runScript(
          this.redis,
          'schedule',
          this.keys.base(partition),
          this.keys.prefix,
          this.tombstoneMs,
          guards.length,
          ...guards,
        );
        return (raw as string[][]).map(parseReply);
      }),
    );
    const duplicate = replies.flat().find((reply) => reply.code === 'duplicate');
    if (duplicate) throw refusals.duplicateKey(duplicate.fields.key);
  }

  private async schedulePartition(partition: number, specs: NormalizedSpec[]): Promise<Timer[]> {
    const base = this.keys.base(partition);
    const fields = specs.map(encodeSpecFields);
    const replies = await this.withRedisNow(async (now) => {
      const args = scheduleArgs(specs, fields, now);
      const raw = await runScript(
        this.redis,
        'schedule',
        base,
        this.keys.prefix,
        this.tombstoneMs,
        0,
        ...args,
      );
      return (raw as string[][]).map(parseReply);
    });
    if (replies[0].code === 'duplicate') throw refusals.duplicateKey(replies[0].fields.key);
    return replies.map((reply, i) => {
      if (reply.code === 'ok') {
        this.options.observer?.scheduled(specs[i].kind);
        return createdTimer(specs[i], fields[i], reply.fields);
      }
      const timer = decodeRow(reply.fields);
      this.warnIfMoved(specs[i], timer);
      return timer;
    });
  }

  /** ifExists 'keep': the first call names the time; a later call asking for another one is only logged. */
  private warnIfMoved(spec: NormalizedSpec, kept: Timer): void {
    const sameSchedule =
      spec.kind === kept.kind &&
      spec.delayMs === kept.delayMs &&
      spec.everyMs === kept.everyMs &&
      spec.cron === kept.cron &&
      spec.tz === kept.tz &&
      (spec.atMs === undefined || kept.delayMs !== undefined || spec.atMs === kept.dueAt);
    if (!sameSchedule) {
      this.logger.warn(
        `ifExists 'keep' returned the existing timer unchanged; the requested time is ignored`,
        {
          key: kept.key,
          id: kept.id,
          version: kept.version,
          status: kept.status,
        },
      );
    }
  }

  private async run(key: string, script: string, ...args: (string | number)[]): Promise<ScriptReply> {
    const base = this.keys.base(this.keys.partitionOf(key));
    return parseReply((await runScript(this.redis, script, base, this.keys.prefix, ...args)) as string[]);
  }

  private expectTimer(key: string, operation: string, reply: ScriptReply): Timer {
    if (reply.code === 'not-found') throw refusals.notFound(key);
    if (reply.code === 'inactive') throw refusals.inactive(key, reply.fields.s, operation);
    if (reply.code !== 'ok') throw new Error(`Unexpected reply '${reply.code}' from ${operation}`);
    return decodeRow(reply.fields);
  }

  private async readRows(keys: string[]): Promise<(Timer | null)[]> {
    if (keys.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const key of keys) pipeline.hgetall(this.keys.row(key));
    const results = (await pipeline.exec()) ?? [];
    return results.map(([error, fields], i) => {
      if (error) throw error;
      const row = fields as Record<string, string>;
      return row.id === undefined ? null : decodeRow({ ...row, key: keys[i] });
    });
  }

  private listLimit(limit: number | undefined): number {
    if (limit === undefined) return DEFAULT_LIST_LIMIT;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT) {
      throw refusals.invalid(
        'limit',
        `limit must be an integer from 1 to ${MAX_LIST_LIMIT}, got ${limit}.`,
        `Pass e.g. limit: ${DEFAULT_LIST_LIMIT}.`,
      );
    }
    return limit;
  }

  private encodeCursor(partition: number, after: string): string {
    return Buffer.from(JSON.stringify([partition, after])).toString('base64url');
  }

  private decodeCursor(cursor: string | undefined): [number, string | null] {
    if (cursor === undefined || cursor === '') return [0, null];
    try {
      const [partition, after] = JSON.parse(Buffer.from(cursor, 'base64url').toString()) as unknown[];
      if (Number.isInteger(partition) && typeof after === 'string') return [partition as number, after];
    } catch {
      // fall through to the refusal
    }
    throw refusals.invalid(
      'cursor',
      'The cursor is not one list() returned.',
      'Pass the nextCursor of the previous page, or omit it to start over.',
    );
  }
}

/**
 * What schedule.lua takes per spec after its guards (docs/design.md, "Store scripts and arguments"): key,
 * ifExists, at ('' for none), the number of row fields, then the fields as name/value pairs.
 */
function scheduleArgs(specs: NormalizedSpec[], fields: RowFields[], redisNow: number): (string | number)[] {
  const args: (string | number)[] = [];
  specs.forEach((spec, i) => {
    const at =
      spec.kind === 'cron' && spec.cron && spec.tz
        ? nextCronOccurrence(spec.cron, spec.tz, redisNow)
        : spec.atMs;
    const names = Object.keys(fields[i]);
    args.push(spec.key, spec.ifExists, at ?? '', names.length);
    for (const name of names) args.push(name, fields[i][name]);
  });
  return args;
}

/** `[code, field, value, ...]` → code + fields; 'retry' carries Redis now as `now`. */
function parseReply(raw: string[]): ScriptReply {
  const [code, ...rest] = raw;
  return { code, fields: code === 'retry' ? { now: rest[0] } : fieldsFromFlat(rest) };
}

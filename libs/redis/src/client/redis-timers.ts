import {
  asTheBatchLeftThem,
  DEFAULT_TOMBSTONE_MS,
  type SundialLogger,
  consoleLogger,
  type BackfillRange,
  type BackfillResult,
  type CancelOutcome,
  type ListOptions,
  normalizeBackfillRange,
  type ListResult,
  type NormalizedSpec,
  normalizeSpec,
  normalizeWhen,
  type RescheduleWhen,
  type Timer,
  type TimerEventName,
  type TimerListener,
  type TimersBackend,
  type TimerSpec,
  type CheckedSpec,
  type JsonInput,
  validateKey,
  validateRequestId,
  validateScope,
  type WriteOptions,
  refusals,
  normalizeBatch,
  firstSlot,
  type DescribeOptions,
  type HistoryOptions,
  type LedgerEntry,
  type NextOptions,
  type NextTime,
  type Preview,
  type TimerDescription,
} from '@sundial/core';
import { duplicateRedis } from '../infra/connection';
import { SUBSCRIBER_OPTIONS } from '../infra/subscription';
import { warnUnlessNoEviction } from '../infra/eviction-check';
import { Partitioned } from '../infra/partitioned';
import type { RowReply } from '../store/replies';
import type { CallRequests } from '../store/requests';
import { StoreCommands } from '../store/store-commands';
import { backfillRow } from './backfill-row';
import { cancelAllWrite, ScopeSweeps } from './cancel-all-write';
import { startWithin } from './client-start';
import { checkCommandTimeout } from './command-timeout';
import { CallFailures } from './call-failures';
import { sendNothingAnswered } from './answered-commands';
import { SentWrites } from './sent-writes';
import { EventSubscriber } from './event-subscriber';
import { LayoutGuard } from './layout-guard';
import { LedgerReads } from './ledger-reads';
import { expectTimer, scheduleCodec } from './write-replies';
import { TimerExplain } from './timer-explain';
import { TimerReads } from './timer-reads';
import { WriteRequests } from './write-requests';
import { checkTimersOptions, type RedisTimersOptions } from './redis-timers-options';
import { DeclarationSets, type DeclarationStep, type DeclarationTurn } from './declaration-sets';

const DEFAULT_CANCEL_BATCH = 1000;

/**
 * The Timers API over Redis (docs/spec.md §5.1): every state change is one Lua script (StoreCommands); reads go
 * straight to the row hashes and indexes (TimerReads). Runs happen elsewhere (the fire path).
 */
export class RedisTimers extends Partitioned<StoreCommands> implements TimersBackend {
  private readonly events: EventSubscriber;
  private readonly reads: TimerReads;
  private readonly ledger: LedgerReads;
  private readonly requests: WriteRequests;
  private readonly logger: SundialLogger;
  private started: Promise<void> | undefined;
  /** `started` has resolved (it then stays so): calls go on without awaiting it. */
  private connected = false;
  private disposed = false;
  private readonly layout: LayoutGuard;
  private readonly explain: TimerExplain;
  private readonly declarations: DeclarationSets;
  private readonly sweeps?: ScopeSweeps; // with `cancelAllRecords`: this client's scope-record sweeps
  private readonly failures: CallFailures; // what a failed call tells its caller

  constructor(private readonly options: RedisTimersOptions) {
    // One retry per command: a Redis outage surfaces as 'unavailable' quickly instead of hanging; a
    // Redis that keeps its socket and answers nothing (frozen), after commandTimeoutMs. The subscriber
    // (a duplicate) has it too: its SUBSCRIBE, unanswered, is tried again (infra/subscription.ts).
    // ioredis waits disconnectTimeout for a socket that already closed: keep that wait short.
    // lazyConnect: no socket until connect() (SundialModule's, at the app's bootstrap) or a first call,
    // so an app whose boot fails before (Nest calls no shutdown hook then) holds nothing open.
    super(
      checkTimersOptions(options),
      (redis, keys, clock) =>
        new StoreCommands(redis, keys, clock, {
          tombstoneMs: options.tombstoneMs ?? DEFAULT_TOMBSTONE_MS,
          cancelBatch: options.cancelBatch ?? DEFAULT_CANCEL_BATCH,
        }),
      {
        maxRetriesPerRequest: 1,
        disconnectTimeout: 100,
        commandTimeout: checkCommandTimeout(options.commandTimeoutMs),
        lazyConnect: true,
      },
    );
    this.failures = new CallFailures(this.redis, options.commandTimeoutMs);
    this.redis.on('error', () => undefined); // surfaced per call as 'unavailable'
    sendNothingAnswered(this.redis); // a timed-out write is not sent again after its caller was answered
    this.logger = options.logger ?? consoleLogger;
    this.reads = new TimerReads(this.redis, this.keys, (n) => this.commands.cancels.sweep(n));
    this.ledger = new LedgerReads(this.redis, this.keys, (key) => this.commands.cancels.settle(key));
    this.requests = new WriteRequests(this.redis, this.keys.prefix, options.requestWindowMs);
    if (options.cancelAllRecords) this.sweeps = new ScopeSweeps(this.commands, this.logger);
    this.layout = new LayoutGuard(this.redis, this.keys, [this.reads, this.ledger], this.logger);
    const access = {
      row: (key: string) =>
        this.call(async () => (await this.reads.armedRow(key)) ?? this.layout.afterMiss(null)),
      call: <T>(read: () => Promise<T>) => this.call(read),
    };
    this.explain = new TimerExplain(access, this.ledger, this.layout, this.clock, options.limits);
    this.declarations = new DeclarationSets(this.redis, this.keys);
    this.events = new EventSubscriber(
      () => duplicateRedis(this.redis, SUBSCRIBER_OPTIONS),
      { channel: this.keys.eventsChannel, markers: () => this.layout.readMarkers() },
      this.logger,
    );
  }

  schedule<P = JsonInput>(spec: CheckedSpec<P>, options?: WriteOptions): Promise<Timer> {
    return this.write(async () => {
      const normalized = [this.normalize(spec, options)];
      return (await this.scheduleNormalized(normalized, 'schedule', [spec], options))[0];
    });
  }

  scheduleMany(specs: TimerSpec[], options?: WriteOptions): Promise<Timer[]>;
  scheduleMany<P>(specs: CheckedSpec<P>[], options?: WriteOptions): Promise<Timer[]>;
  scheduleMany(specs: TimerSpec<unknown>[], options?: WriteOptions): Promise<Timer[]> {
    return this.write(async () => {
      const normalized = normalizeBatch(specs, (spec) => this.normalize(spec, options));
      return asTheBatchLeftThem(await this.scheduleNormalized(normalized, 'scheduleMany', [specs], options));
    });
  }

  async cancel(key: string, options?: WriteOptions): Promise<boolean> {
    return (await this.cancelOutcome(key, options)) === 'cancelled';
  }

  cancelOutcome(key: string, options?: WriteOptions): Promise<CancelOutcome> {
    return this.write(async () => {
      validateKey(key);
      await this.layout.beforeWrite([key]);
      const cancel = (requests: CallRequests) => this.commands.cancel(key, requests);
      // A cancel of nothing changed nothing: like a refusal, it is not remembered (a kept row removed is).
      const done = await this.requests.run('cancel', [key], options, cancel, (done) => done.outcome !== null);
      if (done.outcome === 'cancelled' && !done.again) this.options.observer?.cancelled?.({ count: 1 });
      return done.outcome;
    });
  }

  cancelAll(scope?: string, options?: WriteOptions): Promise<number> {
    return this.write(async () => {
      const prefix = validateScope(scope);
      await this.layout.untilFinished();
      const { redis, keys, commands } = this;
      const store = { redis, keys, commands, observer: this.options.observer };
      return this.requests.run('cancelAll', [prefix], options, (requests) =>
        cancelAllWrite(store, prefix, requests, this.sweeps),
      );
    });
  }

  reschedule(key: string, when: RescheduleWhen, options?: WriteOptions): Promise<Timer> {
    return this.onKey('reschedule', key, [when], options, () => {
      const target = normalizeWhen(when);
      return (requests) => this.commands.reschedule(key, target, requests);
    });
  }

  pause(key: string, options?: WriteOptions): Promise<Timer> {
    return this.onKey('pause', key, [], options, () => (requests) => this.commands.pause(key, requests));
  }

  resume(key: string, options?: WriteOptions): Promise<Timer> {
    return this.onKey('resume', key, [], options, () => (requests) => this.commands.resume(key, requests));
  }

  trigger(key: string, options?: WriteOptions): Promise<Timer> {
    return this.onKey('trigger', key, [], options, () => (requests) => this.commands.trigger(key, requests));
  }

  /** Runs the slots of [from, to] now, in order, each due at its slot (docs/spec.md §3.3c; backfillRow). */
  backfill(key: string, range: BackfillRange, options?: WriteOptions): Promise<BackfillResult> {
    return this.write(async () => {
      validateKey(key);
      const bounds = normalizeBackfillRange(range);
      await this.layout.beforeWrite([key]);
      return this.requests.run('backfill', [key, range], options, (requests) =>
        backfillRow(this.reads, this.commands, () => this.clock.now(), key, bounds, requests),
      );
    });
  }

  get(key: string): Promise<Timer | null> {
    return this.call(async () => (await this.reads.get(key)) ?? this.layout.afterMiss(null));
  }

  list(options: ListOptions = {}): Promise<ListResult> {
    return this.call(() => this.layout.check().then(() => this.reads.list(options)));
  }

  check(id: string): Promise<boolean> {
    return this.call(async () => (await this.reads.check(id)) || this.layout.afterMiss(false));
  }

  snapshot(): Promise<string[]> {
    return this.call(() => this.layout.check().then(() => this.reads.snapshot()));
  }

  history(key: string, options?: HistoryOptions): Promise<LedgerEntry[]> {
    return this.explain.history(key, options);
  }

  next(key: string, options?: NextOptions): Promise<NextTime[]> {
    return this.explain.next(key, options);
  }

  preview<P = JsonInput>(spec: CheckedSpec<P>, options?: NextOptions): Promise<Preview> {
    return this.explain.preview(spec, options);
  }

  describe(key: string, options?: DescribeOptions): Promise<TimerDescription> {
    return this.explain.describe(key, options);
  }

  /** The `@DistributedCron` registrar's announcement of its declared `set` (declaration-sets.ts). */
  declarationTurn(app: string, set: string, step: DeclarationStep, liveMs: number, firstSeen?: number) {
    return this.call<DeclarationTurn>(() => this.declarations.announce(app, set, step, liveMs, firstSeen));
  }

  on(event: TimerEventName, listener: TimerListener): () => void {
    if (this.disposed) throw refusals.disposed('client');
    return this.events.on(event, listener);
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    this.layout.close();
    this.events.emitLocal({ type: 'disposed', id: '', key: '', version: 0, kind: null, at: Date.now() });
    await this.events.close();
    await this.sweeps?.close();
    this.failures.stop();
    await this.closeConnection();
  }

  /**
   * Once per client, before its first call (at start, as `SundialModule` does): waits for Redis (up to
   * `startWaitMs`), checks the store, warns when Redis may evict timers, learns its clock. Retried on
   * failure, and within the wait when a command of it went unanswered (client-start.ts). A call's own
   * start does not wait: in an outage it answers `unavailable` after one retry, as connect() past its wait.
   */
  connect(): Promise<void> {
    return this.start(true).catch((error: unknown) => Promise.reject(this.failures.unreachable(error)));
  }

  private start(wait: boolean): Promise<void> {
    const tries = { waitMs: wait ? this.startWaitMs : 0, logger: this.logger, stopped: () => this.disposed };
    this.started ??= startWithin({ ...tries, told: (error) => this.failures.told(error) }, async (waitMs) => {
      await this.layout.start(await this.prepareStore(this.logger, waitMs));
      await warnUnlessNoEviction(this.redis, (message) => this.logger.warn(message));
      await this.clock.sync();
      this.connected = true;
    }).catch((error: unknown) => {
      this.started = undefined;
      throw error;
    });
    return this.started;
  }

  /** An endAt before the first slot is refused before a key is read or a call sent (docs/spec.md §3.3c). */
  private normalize(spec: TimerSpec<unknown>, options?: WriteOptions): NormalizedSpec {
    const normalized = normalizeSpec(spec, this.options.limits, options?.ownedRow === true);
    if (normalized.kind !== 'once') firstSlot(normalized, this.clock.now());
    return normalized;
  }

  /**
   * Every public call: refused after dispose, started once, Redis connection failures → 'unavailable'.
   * A write cut off after a command of it that changes data was sent says its outcome is unknown; one
   * never sent (Redis away before it), or refused by Redis (OOM, READONLY: ran nothing), changed nothing.
   */
  private async call<T>(operation: () => Promise<T>, write = false): Promise<T> {
    if (this.disposed) throw refusals.disposed('client');
    // Started and subscribed (every call but a client's first): no await on the way to the operation.
    if (!this.connected || this.events.ready()) {
      try {
        await this.start(false);
        await this.events.ready();
      } catch (error) {
        throw this.failures.unreachable(error);
      }
    }
    const sent = new SentWrites();
    try {
      return await sent.run(operation);
    } catch (error) {
      throw this.failures.of(error, write, sent);
    }
  }

  private write<T>(operation: () => Promise<T>): Promise<T> {
    return this.call(operation, true);
  }

  /**
   * reschedule, pause, resume, trigger: one script on the key's row. `prepare` checks the other
   * arguments (before anything is written) and returns the script call.
   */
  private onKey(
    operation: 'reschedule' | 'pause' | 'resume' | 'trigger',
    key: string,
    args: unknown[],
    options: WriteOptions | undefined,
    prepare: () => (requests: CallRequests) => Promise<RowReply>,
  ): Promise<Timer> {
    return this.write(async () => {
      validateKey(key);
      const script = prepare();
      await this.layout.beforeWrite([key]);
      return this.requests.run(operation, [key, ...args], options, (requests) =>
        script(requests).then((reply) => expectTimer(key, operation, reply)),
      );
    });
  }

  private async scheduleNormalized(
    specs: NormalizedSpec[],
    operation: 'schedule' | 'scheduleMany',
    args: unknown[],
    options: WriteOptions | undefined,
  ): Promise<Timer[]> {
    const unless = options?.unlessAnswered;
    if (operation === 'schedule' && unless !== undefined) validateRequestId(unless, 'unlessAnswered');
    await this.layout.beforeWrite(specs.map((spec) => spec.key));
    const codec = scheduleCodec(specs, operation, this.logger, this.keys, this.options.observer);
    return this.requests.run(operation, args, options, (requests) =>
      this.commands.scheduleAll(specs, codec, requests, operation === 'schedule' ? unless : undefined),
    );
  }
}

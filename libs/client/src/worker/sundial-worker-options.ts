import type { FactoryProvider, ModuleMetadata, Type } from '@nestjs/common';
import type { JsonHandlers, TimerHandlerMap } from '@sundial/core';
import type { PartitionTags } from '@sundial/redis';
import type { JsonOptionsClass } from '../options-class-handlers';
import type { Registry } from 'prom-client';

/**
 * `SundialWorkerModule.forRoot(options)`: runs this app's handlers on the Redis backend. The queue
 * identity (`prefix`, `partitions`) is static because @nestjs/bullmq names processors when the module
 * is defined; it must equal `SundialModule`'s, which the module checks at boot.
 */
export interface SundialWorkerModuleOptions {
  /** default 'sundial' */
  prefix?: string;
  /** default 1 */
  partitions?: number;
  /**
   * the partitions whose fire queues this app consumes (and, with `dispatch`, hands off and reconciles);
   * default all. Each an integer in [0, partitions), named once; the deployment's processes together
   * must serve every partition
   */
  serve?: readonly number[];
  /**
   * how the partitions' hash tags are chosen, which names the fire queues: `'spread'` when SundialModule's
   * connection is a Redis Cluster (`redis+cluster://`), else `'plain'` (the default); checked at boot
   */
  tagging?: PartitionTags;
  /**
   * a `BullModule.forRoot(configKey, { connection })` whose connection the fire queues' BullMQ workers
   * use (`getSharedConfigToken(configKey)`); without it they use `SundialModule`'s connection
   */
  configKey?: string;
  /** fire jobs in flight per partition queue (default 16, `DEFAULT_CONCURRENCY`) */
  concurrency?: number;
  /** how long a claim outlives a silent worker (default 30 s) */
  leaseMs?: number;
  /**
   * how long before a timer's due its claim goes (default 5 ms, `DEFAULT_CLAIM_AHEAD_MS`; 0 to 50; 0
   * claims at the due): the round trip is over by the due, and the handler still starts at the due by
   * Redis's clock
   */
  claimAheadMs?: number;
  /**
   * a partition's fire-job consumer that took no job this long while a job waited longer is closed and
   * replaced by a BullMQ Worker the runner makes on SundialModule's connection (default 30 s, `DEFAULT_CONSUMER_STALL_MS`)
   */
  consumerStallMs?: number;
  /**
   * how long the runner lets pass with a partition no dispatcher serves before it warns, once (default
   * 15 s, `DEFAULT_DISPATCHER_GRACE_MS`; an integer ≥ 300; docs/spec.md §4.2)
   */
  dispatcherGraceMs?: number;
  /** at shutdown, how long running handlers may go on before their signals abort (default 25 s, `DEFAULT_CLOSE_GRACE_MS`) */
  shutdownGraceMs?: number;
  /** plain handlers beside the `@OnTimer` methods (the standalone worker's built-ins) */
  handlers?: TimerHandlerMap;
  /**
   * also run the dispatcher and reconciler here (default false): for apps deployed without the
   * scheduler service; safe in every replica, they need no leader
   */
  dispatch?: boolean;
  /** reconciler period when `dispatch` (default 5000 ms) */
  reconcileMs?: number;
  /** start with the app (default true); `false`: the host calls `SundialWorker.start()` / `.stop()` */
  autoStart?: boolean;
  /** where the run metrics of docs/spec.md §6 go (default SundialModule's `metricsRegistry`, else prom-client's global registry) */
  metricsRegistry?: Registry;
}

/**
 * What `SundialWorkerModule.forRootAsync` must be given itself: they name the fire queues and their
 * @nestjs/bullmq processors, which Nest registers when the module is defined, before any factory runs.
 */
export type SundialWorkerStaticField = 'prefix' | 'partitions' | 'serve' | 'tagging' | 'configKey';

/** The options `forRootAsync`'s factory (or options class) gives: all but the queue identity. */
export type SundialWorkerModuleFactoryOptions = Omit<SundialWorkerModuleOptions, SundialWorkerStaticField>;

/**
 * What a forRootAsync factory returns: its `handlers` of typed payloads compile, one whose payload type
 * is not JSON does not (`JsonHandlers`, as forRoot checks them).
 */
export type SundialWorkerFactoryResult<M extends TimerHandlerMap = TimerHandlerMap> =
  SundialWorkerModuleFactoryOptions & { handlers?: M } & JsonHandlers<M>;

/** `forRootAsync({ useClass })` / `useExisting`: a provider that gives the options. */
export interface SundialWorkerOptionsFactory {
  createSundialWorkerOptions():
    SundialWorkerModuleFactoryOptions | Promise<SundialWorkerModuleFactoryOptions>;
}

/**
 * `SundialWorkerModule.forRootAsync(options)`: the queue identity given here (static), the rest from
 * `useFactory` (with `inject`, e.g. ConfigService), `useClass` or `useExisting`; checked at boot as
 * forRoot's are.
 */
export interface SundialWorkerModuleAsyncOptions<
  M extends TimerHandlerMap = TimerHandlerMap,
  C extends SundialWorkerOptionsFactory = SundialWorkerOptionsFactory,
> extends Pick<SundialWorkerModuleOptions, SundialWorkerStaticField> {
  /** modules whose providers the factory injects (e.g. ConfigModule) */
  imports?: ModuleMetadata['imports'];
  /**
   * The injected values as Nest's own factories take them (`FactoryProvider`): `(config) => …` reads
   * `config.get(…)` — typed `never[]` before, an untyped parameter did not compile. What it returns is
   * checked as forRoot's options are, its `handlers` included (`JsonHandlers`).
   */
  useFactory?: (
    ...args: Parameters<FactoryProvider['useFactory']>
  ) => SundialWorkerFactoryResult<M> | Promise<SundialWorkerFactoryResult<M>>;
  inject?: FactoryProvider['inject'];
  /** its `createSundialWorkerOptions()`'s `handlers` checked as a factory's (JsonOptionsClass) */
  useClass?: Type<C> & JsonOptionsClass<C, 'createSundialWorkerOptions'>;
  /** a class token's `handlers` checked as useClass's; a string or symbol token's cannot be */
  useExisting?: (Type<C> & JsonOptionsClass<C, 'createSundialWorkerOptions'>) | string | symbol;
}

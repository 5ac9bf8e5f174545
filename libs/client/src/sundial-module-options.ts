import type { ConfigurableModuleAsyncOptions, ConfigurableModuleOptionsFactory, Type } from '@nestjs/common';
import type { Clock, JsonHandlers, SundialLogger, TimerHandlerMap, ValidationLimits } from '@sundial/core';
import type { RedisConnection } from '@sundial/redis';
import type { Registry } from 'prom-client';
import type { JsonOptionsClass } from './options-class-handlers';

interface CommonOptions {
  limits?: Partial<ValidationLimits>;
  /** how long a cancelled key stays cancelled for `ifExists: 'keep'` (default 7 days) */
  tombstoneMs?: number;
  logger?: SundialLogger;
  /** ledger entries kept per timer (docs/spec.md §3.9; default SUNDIAL_LEDGER, else 50; 0: none) */
  ledger?: number;
  /**
   * names this app's `@DistributedCron` rows (default 'app'), so apps sharing a Redis prefix never
   * remove each other's rows; every replica of one app must use the same name
   */
  appName?: string;
}

/** Timers kept in Redis and run by the cluster's workers (docs/spec.md §5.1). */
export interface RedisBackendOptions extends CommonOptions {
  backend?: 'redis';
  /** a URL, ioredis options, or an existing ioredis client (duplicated, never closed by Sundial) */
  connection: RedisConnection;
  prefix?: string;
  partitions?: number;
  /**
   * where `sundial_timers_scheduled_total` / `_cancelled_total` of this app's calls are counted, and
   * SundialWorkerModule's metrics unless it is given its own (default prom-client's global registry, the
   * one the host's `/metrics` usually serves)
   */
  metricsRegistry?: Registry;
  /**
   * how long the boot waits for a Redis that does not answer yet (a restart, a failover) before it fails
   * saying why (default 30000; 0 does not wait): `RedisTimers.connect()` here, and SundialWorkerModule's
   * runner and dispatcher, which use this connection. A refusal (wrong password, NOPERM) fails at once.
   */
  startWaitMs?: number;
  /**
   * how long a call waits for each Redis reply before it answers `unavailable` (default 5000; a write's
   * says its outcome is unknown: retry it with the same requestId), as `RedisTimers`'s option
   */
  commandTimeoutMs?: number;
  /**
   * how often each replica announces the set of `@DistributedCron` / `@DistributedInterval` rows it
   * declares and looks whether its set became the newest, during a rolling deploy or a rollback (default
   * 5000, at least 100; an announcement lasts three periods)
   */
  cronRefreshMs?: number;
}

/** Timers kept and run in this process by the in-memory engine (docs/spec.md §5.1a). */
export interface MemoryBackendOptions extends CommonOptions {
  backend: 'memory';
  clock?: Clock;
  /** by name; a handler's payload type must be JSON (`forRoot` checks it: JsonHandlers) */
  handlers?: TimerHandlerMap;
  /**
   * how long the app's shutdown lets running handlers end before their signals abort (default 25000,
   * as SundialWorkerModule's on Redis), measured on `clock`; no run starts meanwhile
   */
  shutdownGraceMs?: number;
}

export type SundialModuleOptions = RedisBackendOptions | MemoryBackendOptions;

/** What a `forRootAsync` factory returns: a memory backend's `handlers` checked as forRoot's (JsonHandlers). */
export type SundialModuleFactoryResult<M extends TimerHandlerMap = TimerHandlerMap> = (
  RedisBackendOptions | (MemoryBackendOptions & { handlers?: M })
) &
  JsonHandlers<M>;

type NestAsyncOptions = ConfigurableModuleAsyncOptions<SundialModuleOptions>;

/** `forRootAsync({ useClass })` / `useExisting` (Nest's): a provider whose `create()` gives the options. */
export type SundialOptionsFactory = ConfigurableModuleOptionsFactory<SundialModuleOptions, 'create'>;

/**
 * `SundialModule.forRootAsync(options)`: Nest's async options, the factory's result typed as above, and
 * the `handlers` an options class's `create()` returns checked the same way (JsonOptionsClass).
 */
export type SundialModuleAsyncOptions<
  M extends TimerHandlerMap = TimerHandlerMap,
  C extends SundialOptionsFactory = SundialOptionsFactory,
> = Omit<NestAsyncOptions, 'useFactory' | 'useClass' | 'useExisting'> & {
  useFactory?: (
    ...args: Parameters<NonNullable<NestAsyncOptions['useFactory']>>
  ) => SundialModuleFactoryResult<M> | Promise<SundialModuleFactoryResult<M>>;
  useClass?: Type<C> & JsonOptionsClass<C, 'create'>;
  useExisting?: Type<C> & JsonOptionsClass<C, 'create'>;
};

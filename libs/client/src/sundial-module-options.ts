import type { Clock, EngineLogger, TimerHandler, ValidationLimits } from '@sundial/core';
import type { RedisConnection } from '@sundial/redis';

interface CommonOptions {
  limits?: Partial<ValidationLimits>;
  /** how long a cancelled key stays cancelled for `ifExists: 'keep'` (default 7 days) */
  tombstoneMs?: number;
  logger?: EngineLogger;
}

/** Timers kept in Redis and run by the cluster's workers (docs/spec.md §5.1). */
export interface RedisBackendOptions extends CommonOptions {
  backend?: 'redis';
  connection: RedisConnection;
  prefix?: string;
  partitions?: number;
}

/** Timers kept and run in this process by the in-memory engine (docs/spec.md §5.1a). */
export interface MemoryBackendOptions extends CommonOptions {
  backend: 'memory';
  clock?: Clock;
  handlers?: Readonly<Record<string, TimerHandler>>;
}

export type SundialModuleOptions = RedisBackendOptions | MemoryBackendOptions;

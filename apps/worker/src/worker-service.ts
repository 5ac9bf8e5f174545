import type { SundialLogger, TimerHandler } from '@sundial/core';
import type { WorkerConfig } from './worker-config';

export type HandlerMap = Record<string, TimerHandler>;

/** What the worker process runs: the job consumers that claim, run and complete timers. */
export interface WorkerService {
  start(): Promise<void>;
  /** stop taking jobs, let running handlers finish within graceMs, abort the rest, release claims */
  stop(graceMs: number): Promise<void>;
}

export type WorkerServiceFactory = (
  config: WorkerConfig,
  handlers: HandlerMap,
  logger: SundialLogger,
) => WorkerService;

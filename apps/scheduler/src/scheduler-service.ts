import type { SundialLogger, TimersBackend } from '@sundial/core';
import type { SchedulerConfig } from './scheduler-config';

/** What the scheduler process serves and runs: the API it exposes and its background loops. */
export interface SchedulerService {
  /** the backend the API serves: DELETE /v1/timers/:key answers its `cancelOutcome` */
  timers: TimersBackend;
  /** starts the background loops (dispatcher, reconciler) */
  start(): Promise<void>;
  /** stops the loops and releases connections */
  stop(): Promise<void>;
  /**
   * Redis's now as this process estimates it (epoch ms, docs/spec.md §4.4): the `Sundial-Now` header of
   * every answer (guardHttpEdge, libs/server/src/http-edge.ts). Without it, the process's own clock.
   */
  now?(): number;
}

export type SchedulerServiceFactory = (config: SchedulerConfig, logger: SundialLogger) => SchedulerService;

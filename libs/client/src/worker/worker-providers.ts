import type { Provider, Type } from '@nestjs/common';
import { Backlog, Dispatcher, Reconciler, SundialMetrics, TimerRunner } from '@sundial/redis';
import { TimerHandlerRegistry } from '../handler-registry';
import { OwnRunner } from '../own-runner';
import { loggerOf } from '../nest-logger';
import type { RedisBackendOptions, SundialModuleOptions } from '../sundial-module-options';
import type { Timers } from '../timers';
import { DATA_WATCH, dataWatch } from './data-watch';
import { FIRE_RUNNER, type FireProcessor } from './fire-processor';
import {
  FIRE_LOOPS,
  FIRE_PROCESSORS,
  FireLoops,
  SUNDIAL_WORKER_OPTIONS,
  SundialWorker,
} from './sundial-worker';
import type { SundialWorkerModuleOptions } from './sundial-worker-options';
import { START_HOLD, StartHold } from './start-hold';
import { SIGTERM_CHECK, sigtermCheck } from './sigterm-check';
import { closingTimersOnRefusal, redisOptionsOf, SUNDIAL_OPTIONAL, TIMERS_OPTIONAL } from './worker-checks';

/**
 * The worker's metrics: on its own `metricsRegistry`, else SundialModule's, else prom-client's global one.
 * An app that gave SundialModule its registry, the one its /metrics serves, gets the runs there too.
 */
function workerMetrics(sundial: RedisBackendOptions, worker: SundialWorkerModuleOptions): SundialMetrics {
  return new SundialMetrics(worker.metricsRegistry ?? sundial.metricsRegistry);
}

/**
 * SundialWorkerModule's providers past its options: each reads the checked SUNDIAL_WORKER_OPTIONS (from
 * forRoot or forRootAsync's factory) and SundialModule's, which that provider has checked against them.
 */
export function workerProviders(served: readonly number[], processors: Type<FireProcessor>[]): Provider[] {
  const both = [SUNDIAL_WORKER_OPTIONS, SUNDIAL_OPTIONAL];
  return [
    { provide: START_HOLD, useFactory: () => new StartHold() },
    {
      provide: FIRE_RUNNER,
      useFactory: (
        options: SundialWorkerModuleOptions,
        sundial: SundialModuleOptions | undefined,
        registry: TimerHandlerRegistry,
        own: OwnRunner | undefined,
        timers: Timers | undefined,
      ) =>
        closingTimersOnRefusal(timers, () => {
          const redis = redisOptionsOf(sundial, options);
          for (const [name, handler] of Object.entries(options.handlers ?? {})) {
            registry.add(name, handler, 'SundialWorkerModule handlers');
          }
          const runner = new TimerRunner({
            ...redis,
            handlers: registry.handlers,
            concurrency: options.concurrency,
            leaseMs: options.leaseMs,
            claimAheadMs: options.claimAheadMs,
            consumerStallMs: options.consumerStallMs,
            dispatcherGraceMs: options.dispatcherGraceMs,
            serve: served,
            consumers: 'external',
            observer: workerMetrics(redis, options),
            logger: loggerOf(redis),
          });
          // The app's @DistributedCron rows wait for its handlers' announcement (docs/spec.md §5.1).
          own?.expect(runner.handlersAnnounced);
          return runner;
        }),
      inject: [
        ...both,
        { token: TimerHandlerRegistry, optional: true },
        { token: OwnRunner, optional: true },
        TIMERS_OPTIONAL,
      ],
    },
    {
      provide: FIRE_LOOPS,
      useFactory: (options: SundialWorkerModuleOptions, sundial?: SundialModuleOptions): FireLoops | null => {
        if (!options.dispatch) return null;
        const redis = redisOptionsOf(sundial, options);
        const shared = { ...redis, serve: served, logger: loggerOf(redis) };
        // What a scheduler exports beside its loops (docs/spec.md §6.1): an app that runs them in
        // place of apps/scheduler feeds the same dashboard, alerts and autoscaler.
        const metrics = workerMetrics(redis, options);
        // made (their connections opened) at the worker's start, not as Nest makes the module
        return new FireLoops(metrics, () => ({
          dispatcher: new Dispatcher(shared),
          reconciler: new Reconciler({ ...shared, intervalMs: options.reconcileMs, observer: metrics }),
          backlog: new Backlog(redis),
        }));
      },
      inject: both,
    },
    {
      provide: DATA_WATCH,
      useFactory: (options: SundialWorkerModuleOptions, sundial?: SundialModuleOptions) => {
        const redis = redisOptionsOf(sundial, options);
        return dataWatch(redis, workerMetrics(redis, options));
      },
      inject: both,
    },
    {
      provide: SIGTERM_CHECK,
      useFactory: (options: SundialWorkerModuleOptions, sundial?: SundialModuleOptions) =>
        sigtermCheck(loggerOf(redisOptionsOf(sundial, options))),
      inject: both,
    },
    ...processors,
    { provide: FIRE_PROCESSORS, useFactory: (...all: unknown[]) => all, inject: processors },
    SundialWorker,
  ];
}

import { type DynamicModule, Module, type Provider } from '@nestjs/common';
import { BullModule, getQueueToken } from '@nestjs/bullmq';
import { refusals, SundialError } from '@sundial/core';
import type { ConnectionOptions } from 'bullmq';
import { Redis } from 'ioredis';
import {
  Backlog,
  Dispatcher,
  fireConsumerOptions,
  followFailovers,
  openRedis,
  parseRedisUrl,
  Reconciler,
  servedPartitions,
  SundialKeys,
  SundialMetrics,
  TimerRunner,
  withReconnectCadence,
} from '@sundial/redis';
import { TimerHandlerRegistry } from '../handler-registry';
import { OwnRunner } from '../own-runner';
import { checkWorkerModuleOptions } from '../module-option-checks';
import { loggerOf } from '../nest-logger';
import { SUNDIAL_MODULE_OPTIONS } from '../sundial.module-definition';
import type { RedisBackendOptions, SundialModuleOptions } from '../sundial-module-options';
import { DATA_WATCH, dataWatch } from './data-watch';
import { FIRE_RUNNER, fireProcessor } from './fire-processor';
import {
  FIRE_LOOPS,
  FIRE_PROCESSORS,
  FIRE_QUEUES,
  type FireLoops,
  SUNDIAL_WORKER_OPTIONS,
  SundialWorker,
} from './sundial-worker';
import type { SundialWorkerModuleOptions } from './sundial-worker-options';
import { START_HOLD, StartHold } from './start-hold';
import { SHARED_BULL_CHECK, sharedBullCheck } from './shared-bull-check';
import { SIGTERM_CHECK, sigtermCheck } from './sigterm-check';

/**
 * Runs this app's `@OnTimer` and `@DistributedCron` methods (and `handlers`) on the Redis backend, inside
 * the app and its DI (docs/spec.md §5.1): a TimerRunner whose partition queues are consumed by
 * @nestjs/bullmq processors (`BullModule.registerQueueAsync`, a `WorkerHost` per partition), so a
 * `BullModule.forRoot(configKey, …)` connection and BullMQ conventions apply; only the partitions of
 * `serve` (default all) get a processor, and the dispatcher and reconciler (`dispatch`) serve those.
 * Import it beside `SundialModule.forRoot` (Redis backend); with the memory backend the engine runs the
 * handlers itself.
 */
@Module({})
export class SundialWorkerModule {
  static forRoot(given: SundialWorkerModuleOptions = {}): DynamicModule {
    const options = checkWorkerModuleOptions(given);
    const keys = new SundialKeys(options.prefix, options.partitions, options.tagging);
    const served = servedPartitions(options);
    const workerOptions = fireConsumerOptions(options);
    const processors = served.map((partition) =>
      fireProcessor(partition, keys.queueName(partition), options.configKey, workerOptions),
    );
    const providers: Provider[] = [
      { provide: SUNDIAL_WORKER_OPTIONS, useValue: options },
      { provide: START_HOLD, useFactory: () => new StartHold() },
      {
        provide: FIRE_RUNNER,
        useFactory: (
          sundial: SundialModuleOptions | undefined,
          registry: TimerHandlerRegistry,
          own: OwnRunner | undefined,
        ) => {
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
            observer: new SundialMetrics(options.metricsRegistry),
            logger: loggerOf(redis),
          });
          // The processors were named when the module was defined; the connection decides the tags.
          if (runner.keys.tagging !== keys.tagging) throw taggingMismatch(runner.keys.tagging);
          // The app's @DistributedCron rows wait for its handlers' announcement (docs/spec.md §5.1).
          own?.expect(runner.handlersAnnounced);
          return runner;
        },
        inject: [
          SUNDIAL_OPTIONAL,
          { token: TimerHandlerRegistry, optional: true },
          { token: OwnRunner, optional: true },
        ],
      },
      {
        provide: FIRE_LOOPS,
        useFactory: (sundial: SundialModuleOptions | undefined): FireLoops | null => {
          if (!options.dispatch) return null;
          const redis = redisOptionsOf(sundial, options);
          const shared = { ...redis, serve: served, logger: loggerOf(redis) };
          // What a scheduler exports beside its loops (docs/spec.md §6.1): an app that runs them in
          // place of apps/scheduler feeds the same dashboard, alerts and autoscaler.
          const metrics = new SundialMetrics(options.metricsRegistry);
          return {
            dispatcher: new Dispatcher(shared),
            reconciler: new Reconciler({ ...shared, intervalMs: options.reconcileMs, observer: metrics }),
            backlog: new Backlog(redis),
            metrics,
          };
        },
        inject: [SUNDIAL_OPTIONAL],
      },
      {
        provide: DATA_WATCH,
        useFactory: (sundial: SundialModuleOptions | undefined) =>
          dataWatch(redisOptionsOf(sundial, options), options),
        inject: [SUNDIAL_OPTIONAL],
      },
      {
        provide: SIGTERM_CHECK,
        useFactory: (sundial: SundialModuleOptions | undefined) =>
          sigtermCheck(loggerOf(redisOptionsOf(sundial, options))),
        inject: [SUNDIAL_OPTIONAL],
      },
      ...processors,
      { provide: FIRE_PROCESSORS, useFactory: (...all: unknown[]) => all, inject: processors },
      {
        provide: FIRE_QUEUES,
        useFactory: (...all: unknown[]) => all,
        inject: served.map((partition) => getQueueToken(keys.queueName(partition))),
      },
      SundialWorker,
    ];
    return {
      module: SundialWorkerModule,
      imports: [
        BullModule.registerQueueAsync(
          ...served.map((partition) => ({
            name: keys.queueName(partition),
            configKey: options.configKey,
            // the configKey checked before @nestjs/bullmq reads it (a missing one, an unfit client)
            imports: [sharedBullCheck(options.configKey)],
            useFactory: (sundial: SundialModuleOptions | undefined) => {
              const { connection } = redisOptionsOf(sundial, options);
              // With a shared BullModule config its connection is used; the prefix is always Sundial's.
              return options.configKey
                ? { prefix: workerOptions.prefix }
                : { prefix: workerOptions.prefix, connection: bullConnection(connection) };
            },
            inject: [SUNDIAL_OPTIONAL, SHARED_BULL_CHECK],
          })),
        ),
      ],
      providers,
      exports: [SundialWorker],
    };
  }
}

/** SundialModule's options, injected so that a worker module without it says what is missing. */
const SUNDIAL_OPTIONAL = { token: SUNDIAL_MODULE_OPTIONS, optional: true };

function taggingMismatch(actual: string): SundialError {
  return new SundialError({
    reason: 'invalid',
    field: 'tagging',
    message: `SundialModule's connection needs partition tags '${actual}', but SundialWorkerModule named its queues for the other kind.`,
    fix: `Pass SundialWorkerModule.forRoot({ tagging: '${actual}' }) ('spread' on a Redis Cluster, 'plain' otherwise).`,
  });
}

/** SundialModule's Redis options, checked against the worker's static queue identity. */
function redisOptionsOf(
  sundial: SundialModuleOptions | undefined,
  worker: SundialWorkerModuleOptions,
): RedisBackendOptions {
  if (sundial === undefined) throw refusals.workerWithoutSundialModule();
  if (sundial.backend === 'memory') {
    throw new SundialError({
      reason: 'invalid',
      field: 'backend',
      message: "SundialWorkerModule runs handlers from Redis, but SundialModule uses backend 'memory'.",
      fix: 'Drop SundialWorkerModule with the memory backend: the in-memory engine runs the @OnTimer handlers itself.',
    });
  }
  const theirs = new SundialKeys(sundial.prefix, sundial.partitions);
  const ours = new SundialKeys(worker.prefix, worker.partitions);
  const mismatch = (['prefix', 'partitions'] as const).find((field) => theirs[field] !== ours[field]);
  if (mismatch) {
    throw new SundialError({
      reason: 'invalid',
      field: mismatch,
      message: `SundialWorkerModule has ${mismatch} ${ours[mismatch]} but SundialModule has ${theirs[mismatch]}.`,
      fix: `Give both modules the same ${mismatch}: the workers must consume the queues the timers are written to.`,
    });
  }
  return sundial;
}

/**
 * BullMQ's connection options: it takes `url` for one node; of a client we give its options, so BullMQ
 * opens (and closes) connections of its own with the `maxRetriesPerRequest: null` its workers need (and
 * the client's reconnect strategy: the host's; through Sentinel, they follow a failover at once:
 * followFailovers). A URL or options get Sundial's reconnect cadence unless
 * they name a `retryStrategy`, as Sundial's own connections do: BullMQ's back-off (1 s growing to 20 s)
 * kept the workers from fire jobs for up to ~20 s after an outage. A Cluster or Sentinel URL
 * (docs/spec.md §5.4) is one BullMQ cannot read: it gets a client opened by `openRedis`, shared by the
 * partition queues and their workers (which duplicate it for their blocking reads) and kept for the
 * life of the process, as BullMQ never closes a connection it was given.
 */
function bullConnection(connection: RedisBackendOptions['connection']): ConnectionOptions {
  if (connection instanceof Redis) {
    return followFailovers({ ...connection.options, maxRetriesPerRequest: null }) as ConnectionOptions;
  }
  const url = typeof connection === 'string' ? connection : connection.url;
  if (url !== undefined && parseRedisUrl(url).kind !== 'node') {
    return openRedis(connection, { maxRetriesPerRequest: null }) as ConnectionOptions;
  }
  return followFailovers(
    withReconnectCadence(typeof connection === 'string' ? { url: connection } : connection),
  ) as ConnectionOptions;
}

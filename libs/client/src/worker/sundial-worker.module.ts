import {
  type DynamicModule,
  type InjectionToken,
  Module,
  type ModuleMetadata,
  type Provider,
} from '@nestjs/common';
import { BullModule, getQueueToken, getSharedConfigToken } from '@nestjs/bullmq';
import type { ConnectionOptions } from 'bullmq';
import { fireConsumerOptions, servedPartitions, SundialKeys } from '@sundial/redis';
import type { JsonHandlers, TimerHandlerMap } from '@sundial/core';
import {
  checkWorkerAsyncOptions,
  checkWorkerFactoryOptions,
  checkWorkerModuleOptions,
} from '../module-option-checks';
import type { SundialModuleOptions } from '../sundial-module-options';
import type { Timers } from '../timers';
import { fireProcessor } from './fire-processor';
import { FIRE_QUEUES, SUNDIAL_WORKER_OPTIONS, SundialWorker } from './sundial-worker';
import type {
  SundialWorkerModuleAsyncOptions,
  SundialWorkerModuleOptions,
  SundialWorkerOptionsFactory,
} from './sundial-worker-options';
import { FIRE_CONFIG_KEY, SHARED_BULL_CHECK, sharedBullCheck } from './shared-bull-check';
import { HELD_CONNECTIONS, HeldConnections } from './held-connections';
import {
  checkTagging,
  closingTimersOnRefusal,
  redisOptionsOf,
  SUNDIAL_OPTIONAL,
  TIMERS_OPTIONAL,
} from './worker-checks';
import { workerProviders } from './worker-providers';

/**
 * Runs this app's `@OnTimer` and `@DistributedCron` methods (and `handlers`) on the Redis backend, inside
 * the app and its DI (docs/spec.md §5.1): a TimerRunner whose partition queues are consumed by
 * @nestjs/bullmq processors (`BullModule.registerQueueAsync`, a `WorkerHost` per partition), so a
 * `BullModule.forRoot(configKey, …)` connection and BullMQ conventions apply; only the partitions of
 * `serve` (default all) get a processor, and the dispatcher and reconciler (`dispatch`) serve those.
 * Import it beside `SundialModule.forRoot` (Redis backend); with the memory backend the engine runs the
 * handlers itself. `forRootAsync` takes all but the queue identity from a factory (e.g. ConfigService).
 */
@Module({})
export class SundialWorkerModule {
  /**
   * The options given here, checked now: a wrong one stops the app at its definition. `handlers` of typed
   * payloads compile; one whose payload type is not JSON does not (JsonHandlers).
   */
  static forRoot<M extends TimerHandlerMap>(
    given?: SundialWorkerModuleOptions & { handlers?: M } & JsonHandlers<M>,
  ): DynamicModule {
    const options = checkWorkerModuleOptions(given ?? {});
    return define(options, [{ provide: WORKER_GIVEN, useValue: options }], [], () => options);
  }

  /**
   * `forRootAsync({ imports, inject, useFactory })` (or `useClass` / `useExisting` of a
   * SundialWorkerOptionsFactory): the options from ConfigService or another provider, checked at boot as
   * forRoot's are. The queue identity (prefix, partitions, serve, tagging, configKey) is given here: it
   * names the fire queues, which @nestjs/bullmq registers when the module is defined (docs/spec.md §5.1).
   */
  static forRootAsync<M extends TimerHandlerMap, C extends SundialWorkerOptionsFactory>(
    given: SundialWorkerModuleAsyncOptions<M, C>,
  ): DynamicModule {
    const identity = checkWorkerAsyncOptions(given);
    const { useFactory, useClass, useExisting, inject = [] } = given;
    const check = (value: unknown): SundialWorkerModuleOptions => checkWorkerFactoryOptions(identity, value);
    // A factory that throws (ConfigService.getOrThrow of an unset variable) closes Timers as a refusal does.
    const options: Provider = useFactory
      ? {
          provide: WORKER_GIVEN,
          useFactory: (timers: Timers | undefined, ...args: never[]) =>
            closingTimersOnRefusal(timers, () => useFactory(...args)),
          inject: [TIMERS_OPTIONAL, ...inject],
        }
      : {
          provide: WORKER_GIVEN,
          useFactory: (timers: Timers | undefined, factory: SundialWorkerOptionsFactory) =>
            closingTimersOnRefusal(timers, () => factory.createSundialWorkerOptions()),
          inject: [TIMERS_OPTIONAL, (useClass ?? useExisting) as InjectionToken],
        };
    const providers = useClass ? [useClass, options] : [options];
    return define(identity, providers, given.imports ?? [], check);
  }
}

/** The options as given (forRoot, checked) or as forRootAsync's factory gave them (checked at boot). */
const WORKER_GIVEN = Symbol('sundial:worker-given-options');

/**
 * The module: its queues and processors named from the static `identity`; every other option read from
 * SUNDIAL_WORKER_OPTIONS, resolved at boot (checked against SundialModule's before any connection opens).
 */
function define(
  identity: SundialWorkerModuleOptions,
  given: Provider[],
  imports: NonNullable<ModuleMetadata['imports']>,
  check: (given: unknown) => SundialWorkerModuleOptions,
): DynamicModule {
  const keys = new SundialKeys(identity.prefix, identity.partitions, identity.tagging);
  const served = servedPartitions(identity);
  const { prefix } = fireConsumerOptions(identity);
  const processors = served.map((partition) =>
    fireProcessor(partition, keys.queueName(partition), identity.configKey),
  );
  // Every check before any of the module's connections opens (a refusal closes SundialModule's too):
  // the runner, the loops and @nestjs/bullmq's queues all wait for the checked options.
  const shared = sharedBullCheck(identity.configKey);
  const options: DynamicModule = {
    module: SundialWorkerOptionsModule,
    imports: [...imports, shared],
    providers: [
      ...given,
      {
        provide: SUNDIAL_WORKER_OPTIONS,
        useFactory: (given: unknown, _shared: true, sundial?: SundialModuleOptions, timers?: Timers) =>
          closingTimersOnRefusal(timers, () => {
            const checked = check(given);
            checkTagging(redisOptionsOf(sundial, checked), keys);
            return checked;
          }),
        inject: [WORKER_GIVEN, SHARED_BULL_CHECK, SUNDIAL_OPTIONAL, TIMERS_OPTIONAL],
      },
      { provide: HELD_CONNECTIONS, useFactory: () => new HeldConnections() },
    ],
    exports: [SUNDIAL_WORKER_OPTIONS, HELD_CONNECTIONS, shared],
  };
  const { configKey } = identity;
  return {
    module: SundialWorkerModule,
    imports: [
      options,
      BullModule.registerQueueAsync(
        ...served.map((partition) => ({
          name: keys.queueName(partition),
          // Without configKey, Sundial's own (empty) shared config: the app's unnamed
          // BullModule.forRoot (its defaultJobOptions, telemetry, streams…) is not merged in.
          configKey: configKey ?? FIRE_CONFIG_KEY,
          // the configKey checked before @nestjs/bullmq reads it (a missing one, an unfit client)
          imports: [options],
          useFactory: (
            checked: SundialWorkerModuleOptions,
            held: HeldConnections,
            sundial?: SundialModuleOptions,
            bull?: { connection?: ConnectionOptions },
          ) => {
            // With a shared BullModule config its connection is used; the prefix is always Sundial's.
            // Either is held shut until the worker starts (held-connections.ts).
            const connection = configKey
              ? held.forShared(bull?.connection)
              : held.forSundial(redisOptionsOf(sundial, checked).connection);
            return connection ? { prefix, connection } : { prefix };
          },
          inject: [
            SUNDIAL_WORKER_OPTIONS,
            HELD_CONNECTIONS,
            SUNDIAL_OPTIONAL,
            ...(configKey ? [{ token: getSharedConfigToken(configKey), optional: true }] : []),
          ],
        })),
      ),
    ],
    providers: [
      ...workerProviders(served, processors),
      {
        provide: FIRE_QUEUES,
        useFactory: (...all: unknown[]) => all,
        inject: served.map((partition) => getQueueToken(keys.queueName(partition))),
      },
    ],
    exports: [SundialWorker],
  };
}

/** Where SundialWorkerModule's options are resolved and checked (forRootAsync's factory and its imports). */
@Module({})
class SundialWorkerOptionsModule {}

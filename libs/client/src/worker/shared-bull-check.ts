import { type DynamicModule, Module } from '@nestjs/common';
import { getSharedConfigToken } from '@nestjs/bullmq';
import { SundialError } from '@sundial/core';
import type { Timers } from '../timers';
import { closingTimersOnRefusal, TIMERS_OPTIONAL } from './worker-checks';

/** Resolved before the fire queues' options: the `configKey` connection checked (shared-bull-check.ts). */
export const SHARED_BULL_CHECK = Symbol('sundial:shared-bull-check');

/**
 * The fire queues' shared config when SundialWorkerModule has no `configKey`: Sundial's own, empty. Without
 * it @nestjs/bullmq merges the app's unnamed `BullModule.forRoot` config (its `defaultJobOptions`,
 * `telemetry`, `streams`…) into every queue registered without a configKey, Sundial's included.
 */
export const FIRE_CONFIG_KEY = 'sundial:fire-queues';

/** What a `BullModule.forRoot(configKey, …)` holds that this check reads. */
interface SharedBullConfig {
  connection?: unknown;
}

/**
 * SundialWorkerModule's `configKey`, checked before @nestjs/bullmq reads it (docs/spec.md §5.1): a key no
 * `BullModule.forRoot` registered (a typo) stopped the boot with @nestjs/bullmq's
 * `MissingBullSharedConfigurationError`, which names neither Sundial nor the option; a connection that is
 * an ioredis client without `maxRetriesPerRequest: null` with BullMQ's `Your redis options
 * maxRetriesPerRequest must be null`, from deep in a worker's constructor. Both stop it with reason
 * `invalid`, field `configKey`, and a fix. The module is imported by the queue registrations, whose
 * options wait for the check.
 */
export function sharedBullCheck(configKey: string | undefined): DynamicModule {
  return {
    module: SharedBullCheckModule,
    providers: [
      {
        provide: SHARED_BULL_CHECK,
        useFactory: (timers: Timers | undefined, shared: SharedBullConfig | undefined) =>
          closingTimersOnRefusal(timers, () => checkShared(configKey, shared)),
        inject: [
          TIMERS_OPTIONAL,
          ...(configKey === undefined ? [] : [{ token: getSharedConfigToken(configKey), optional: true }]),
        ],
      },
      ...(configKey === undefined ? [{ provide: getSharedConfigToken(FIRE_CONFIG_KEY), useValue: {} }] : []),
    ],
    exports: sharedBullExports(configKey),
  };
}

/** The check, and without configKey the fire queues' own shared config (FIRE_CONFIG_KEY). */
function sharedBullExports(configKey: string | undefined): (string | symbol)[] {
  return [SHARED_BULL_CHECK, ...(configKey === undefined ? [getSharedConfigToken(FIRE_CONFIG_KEY)] : [])];
}

@Module({})
class SharedBullCheckModule {}

function checkShared(configKey: string | undefined, shared: SharedBullConfig | undefined): true {
  if (configKey === undefined) return true;
  if (shared === undefined) {
    throw new SundialError({
      reason: 'invalid',
      field: 'configKey',
      message: `SundialWorkerModule.forRoot({ configKey: '${configKey}' }) names a BullModule configuration this app does not register: no BullModule.forRoot('${configKey}', …) or forRootAsync('${configKey}', …).`,
      fix: `Register BullModule.forRoot('${configKey}', { connection }) in the app (it is global), give configKey the name your BullModule.forRoot uses, or drop configKey (the fire queues then use SundialModule's connection).`,
    });
  }
  const retries = clientRetries(shared.connection);
  if (retries !== undefined && retries !== null) {
    throw new SundialError({
      reason: 'invalid',
      field: 'configKey',
      message: `BullModule.forRoot('${configKey}')'s connection is an ioredis client with maxRetriesPerRequest ${String(retries)}: the BullMQ workers that take Sundial's fire jobs through it need null (BullMQ refuses such a client for a worker).`,
      fix: `Create that client with { maxRetriesPerRequest: null }, give BullModule.forRoot('${configKey}', …) connection options instead of a client (BullMQ then sets it for its workers), or drop configKey (the fire queues then use SundialModule's connection).`,
    });
  }
  return true;
}

/**
 * A client's `maxRetriesPerRequest`, where BullMQ reads it (its `options`: ioredis fills in its default,
 * 20); undefined for connection options, which BullMQ completes itself.
 */
function clientRetries(connection: unknown): number | null | undefined {
  if (typeof connection !== 'object' || connection === null) return undefined;
  if (typeof (connection as { duplicate?: unknown }).duplicate !== 'function') return undefined;
  const { options } = connection as { options?: { maxRetriesPerRequest?: number | null } };
  return options?.maxRetriesPerRequest;
}

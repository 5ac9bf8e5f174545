import { refusals, SundialError } from '@sundial/core';
import { namesCluster, SundialKeys } from '@sundial/redis';
import type { RedisBackendOptions, SundialModuleOptions } from '../sundial-module-options';
import { SUNDIAL_MODULE_OPTIONS } from '../sundial.module-definition';
import { Timers } from '../timers';
import type { SundialWorkerModuleOptions } from './sundial-worker-options';

/** SundialModule's options, injected so that a worker module without it says what is missing. */
export const SUNDIAL_OPTIONAL = { token: SUNDIAL_MODULE_OPTIONS, optional: true };

/** SundialModule's Timers, injected so that a refusal at boot closes its connection (below). */
export const TIMERS_OPTIONAL = { token: Timers, optional: true };

/**
 * Runs a boot step of SundialWorkerModule; when it refuses, SundialModule's Timers is disposed before the
 * refusal goes on. Nest calls no shutdown hook of an app whose providers failed to be created: whatever
 * Timers holds then is let go here. (Its connection opens at the bootstrap since `lazyConnect`, so none
 * is open yet; with `isGlobal: false` Timers is not visible here at all, and that is why it had to be.)
 */
export async function closingTimersOnRefusal<T>(
  timers: Timers | undefined,
  step: () => T | Promise<T>,
): Promise<T> {
  try {
    return await step();
  } catch (error) {
    await timers?.dispose().catch(() => undefined);
    throw error;
  }
}

/** The tags SundialModule's connection needs, checked before any runner's connection opens. */
export function checkTagging(sundial: RedisBackendOptions, keys: SundialKeys): void {
  const actual = namesCluster(sundial.connection) ? 'spread' : 'plain';
  if (actual === keys.tagging) return;
  throw new SundialError({
    reason: 'invalid',
    field: 'tagging',
    message: `SundialModule's connection needs partition tags '${actual}', but SundialWorkerModule named its queues for the other kind.`,
    fix: `Pass SundialWorkerModule.forRoot({ tagging: '${actual}' }) ('spread' on a Redis Cluster, 'plain' otherwise).`,
  });
}

/** SundialModule's Redis options, checked against the worker's static queue identity. */
export function redisOptionsOf(
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

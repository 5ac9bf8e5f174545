import { createEngine, type TimersApi } from '@sundial/core';
import { RedisTimers } from '@sundial/redis';
import type { SundialModuleOptions } from './sundial-module-options';

/** The `TimersApi` the options ask for. */
export function createBackend(options: SundialModuleOptions): TimersApi {
  if (options.backend === 'memory') {
    const { clock, handlers = {}, limits, tombstoneMs, logger } = options;
    return createEngine({ clock, handlers, limits, tombstoneMs, logger });
  }
  const { connection, prefix, partitions, limits, tombstoneMs, logger } = options;
  return new RedisTimers({ connection, prefix, partitions, limits, tombstoneMs, logger });
}

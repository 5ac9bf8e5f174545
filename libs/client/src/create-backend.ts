import { createEngine, type TimersApi, type TimersBackend } from '@sundial/core';
import { DEFAULT_CLOSE_GRACE_MS, RedisTimers, SundialMetrics } from '@sundial/redis';
import { logFailedRuns } from './failed-run-lines';
import type { TimerHandlerRegistry } from './handler-registry';
import { loggerOf } from './nest-logger';
import type { SundialModuleOptions } from './sundial-module-options';

/** The backend the options ask for; the in-memory engine runs the app's registered handlers. */
export function createBackend(options: SundialModuleOptions, registry: TimerHandlerRegistry): TimersBackend {
  if (options.backend === 'memory') {
    const { clock, limits, tombstoneMs, ledger, shutdownGraceMs = DEFAULT_CLOSE_GRACE_MS } = options;
    const logger = loggerOf(options);
    const handlers = registry.handlers;
    const engine = createEngine({ clock, handlers, limits, tombstoneMs, logger, ledger, shutdownGraceMs });
    logFailedRuns(engine, logger);
    return engine;
  }
  const { connection, prefix, partitions, limits, tombstoneMs, ledger, startWaitMs, commandTimeoutMs } =
    options;
  const logger = loggerOf(options);
  const given = {
    connection,
    prefix,
    partitions,
    limits,
    tombstoneMs,
    logger,
    ledger,
    startWaitMs,
    commandTimeoutMs,
  };
  return new RedisTimers({ ...given, observer: new SundialMetrics(options.metricsRegistry) });
}

/**
 * At boot, before the app's first call: a Redis client connects (`RedisTimers.connect`), waiting for a
 * Redis away for a moment (up to `startWaitMs`, default 30 s, then the boot fails saying why); the memory engine has nothing to do.
 */
export async function connectBackend(backend: TimersApi): Promise<void> {
  if (backend instanceof RedisTimers) await backend.connect();
}

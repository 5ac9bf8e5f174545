import type { INestApplicationContext } from '@nestjs/common';
import type { SundialLogger } from '@sundial/core';
import { stopTracing } from './tracing';

/**
 * What made the process stop, as its shutdown lines say it: a signal (`{ signal: 'SIGTERM' }`), or the
 * process itself (`{ reason: 'repartition' }`: a repartition replaced its partition count).
 */
export type ShutdownCause = { signal: NodeJS.Signals } | { reason: string };

/**
 * On SIGTERM/SIGINT, closes the app (Nest shutdown hooks: stop taking work, drain, release) and exits
 * 0 — Nest's own enableShutdownHooks re-raises the signal, which would exit 143. A close that takes
 * longer than `deadlineMs` (e.g. Redis is gone and connections cannot say goodbye), or a signal while
 * shutting down, exits at once with 1. Returns the same shutdown for the process's own causes (no signal
 * is raised for them, so the lines name the cause, not a SIGTERM nobody sent), and whether one began: a
 * start it cut short (its connections closed under it) is not a failed start (serve.ts).
 */
export function exitOnSignal(
  app: INestApplicationContext,
  logger: SundialLogger,
  deadlineMs: number,
): { shutdown: (cause: ShutdownCause) => void; stopping: () => boolean } {
  let closing = false;
  const exitNow = (why: string, cause: ShutdownCause): never => {
    logger.error(`${why}: exiting now`, { ...cause });
    process.exit(1);
  };
  const shutdown = (cause: ShutdownCause): void => {
    if (closing) {
      if ('signal' in cause) exitNow('second signal while shutting down', cause);
      return; // already on its way out
    }
    closing = true;
    logger.info('shutting down', { ...cause });
    setTimeout(() => exitNow(`shutdown still running after ${deadlineMs} ms`, cause), deadlineMs).unref();
    // The spans still buffered are sent before the exit (stopTracing is a no-op with tracing off).
    app
      .close()
      .then(stopTracing)
      .then(
        () => {
          logger.info('shut down cleanly', { ...cause });
          process.exit(0);
        },
        (error: unknown) => {
          logger.error('shutdown failed', { error: String(error) });
          process.exit(1);
        },
      );
  };
  const onSignal = (signal: NodeJS.Signals): void => shutdown({ signal });
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  return { shutdown, stopping: () => closing };
}

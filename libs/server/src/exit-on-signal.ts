import type { INestApplicationContext } from '@nestjs/common';
import type { SundialLogger } from '@sundial/core';
import { stopTracing } from './tracing';

/**
 * On SIGTERM/SIGINT, closes the app (Nest shutdown hooks: stop taking work, drain, release) and exits
 * 0 — Nest's own enableShutdownHooks re-raises the signal, which would exit 143. A close that takes
 * longer than `deadlineMs` (e.g. Redis is gone and connections cannot say goodbye), or a second
 * signal, exits at once with 1.
 */
export function exitOnSignal(app: INestApplicationContext, logger: SundialLogger, deadlineMs: number): void {
  let closing = false;
  const exitNow = (why: string, signal: NodeJS.Signals): never => {
    logger.error(`${why}: exiting now`, { signal });
    process.exit(1);
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    if (closing) exitNow('second signal while shutting down', signal);
    closing = true;
    logger.info('shutting down', { signal });
    setTimeout(() => exitNow(`shutdown still running after ${deadlineMs} ms`, signal), deadlineMs).unref();
    // The spans still buffered are sent before the exit (stopTracing is a no-op with tracing off).
    app
      .close()
      .then(stopTracing)
      .then(
        () => {
          logger.info('shut down cleanly', { signal });
          process.exit(0);
        },
        (error: unknown) => {
          logger.error('shutdown failed', { error: String(error) });
          process.exit(1);
        },
      );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

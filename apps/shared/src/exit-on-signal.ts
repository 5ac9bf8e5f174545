import type { INestApplicationContext, LoggerService } from '@nestjs/common';

/**
 * On SIGTERM/SIGINT, closes the app (Nest shutdown hooks: stop taking work, drain, release) and exits
 * 0 — Nest's own enableShutdownHooks re-raises the signal, which would exit 143. A second signal
 * while closing exits at once with 1.
 */
export function exitOnSignal(app: INestApplicationContext, logger: LoggerService): void {
  let closing = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (closing) {
      logger.warn({ msg: 'second signal while shutting down: exiting now', signal });
      process.exit(1);
    }
    closing = true;
    logger.log({ msg: 'shutting down', signal });
    app.close().then(
      () => {
        logger.log({ msg: 'shut down cleanly', signal });
        process.exit(0);
      },
      (error: unknown) => {
        logger.error({ msg: 'shutdown failed', error: String(error) });
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

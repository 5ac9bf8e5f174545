import { createPino } from './pino-logger';
import { startFailure } from './start-failure';

/**
 * A failed start's one fatal line, then exit 1: `<name> could not start`, the error as `err` (a refusal's
 * reason, field, message and fix), and what to do where start-failure.ts knows it (a port in use). serve.ts
 * writes it for a start that failed, main.ts for an environment refused before the app loads. Narrow
 * (pino and the app's own files): main.ts calls it before Nest, BullMQ and ioredis load.
 */
export function exitStartFailed(name: string, error: unknown): never {
  const { why, fix } = startFailure(error);
  createPino('fatal').fatal({ err: error, fix }, `${name} could not start${why ? `: ${why}` : ''}`);
  process.exit(1);
}

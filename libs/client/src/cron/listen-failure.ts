import type { HttpAdapterHost } from '@nestjs/core';

/** The node HTTP server under the app's HTTP adapter (Express's or Fastify's), as far as it is used here. */
interface HttpServer {
  listening?: boolean;
  once(event: 'error' | 'listening', listener: (error?: unknown) => void): unknown;
  off(event: 'error' | 'listening', listener: (error?: unknown) => void): unknown;
}

/**
 * Calls `failed` when the app's HTTP server fails to listen (its port in use, an address it may not
 * bind): Nest's `app.listen` runs the bootstrap hooks first, so the boot's @DistributedCron pass has run
 * by then, and announced a declaration set of a replica that is not going to run. Nothing once the
 * server listens, nor in an app without one (`createApplicationContext`, a `TestingModule`). Returns
 * what stops watching (the app closes).
 */
export function onListenFailure(
  host: HttpAdapterHost | undefined,
  failed: (error: unknown) => void,
): () => void {
  const server = host?.httpAdapter?.getHttpServer?.() as HttpServer | undefined;
  if (typeof server?.once !== 'function' || server.listening) return () => undefined;
  const stop = (): void => {
    server.off('error', onError);
    server.off('listening', stop);
  };
  // Nest's listen adds its own 'error' listener (it rejects): this one is called before it.
  const onError = (error: unknown): void => {
    stop();
    failed(error);
  };
  server.once('error', onError);
  server.once('listening', stop);
  return stop;
}

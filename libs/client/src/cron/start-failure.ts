import type { HttpAdapterHost } from '@nestjs/core';

/** The node HTTP server under the app's HTTP adapter (Express's or Fastify's), as far as it is used here. */
interface HttpServer {
  listening?: boolean;
  once(event: 'error' | 'listening', listener: (error?: unknown) => void): unknown;
  off(event: 'error' | 'listening', listener: (error?: unknown) => void): unknown;
}

/** What stops watching: `closing` when the app closes (a close before the server listened is a failure). */
export type StopWatchingStart = (closing?: boolean) => void;

/**
 * Calls `failed` (once) when the app turns out not to have started after the boot's @DistributedCron
 * pass announced this replica's declaration set — Nest's `app.listen` runs the bootstrap hooks first,
 * and a hook after SundialModule's may still fail the boot:
 * - its HTTP server fails to listen (its port in use, an address it may not bind);
 * - the process exits before the server listened (a provider's onApplicationBootstrap threw after
 *   SundialModule's: Nest's starter main.ts leaves the rejection unhandled, and Node exits; or a catch
 *   calls `process.exit(1)`). Nest calls no hook then, and the process gives no turn of its event loop:
 *   `failed` must send its command synchronously (a connected ioredis client writes it at once);
 * - the app closes before the server listened (a catch that calls `app.close()`: Nest runs the shutdown
 *   hooks of a failed init).
 * Nothing once the server listens, nor in an app without one (`createApplicationContext`, a
 * `TestingModule`): nothing there tells a failed boot from a started one.
 */
export function onStartFailure(
  host: HttpAdapterHost | undefined,
  failed: (why: string) => void,
): StopWatchingStart {
  const server = host?.httpAdapter?.getHttpServer?.() as HttpServer | undefined;
  if (typeof server?.once !== 'function' || server.listening) return () => undefined;
  let watching = true;
  const stop: StopWatchingStart = (closing = false) => {
    if (!watching) return;
    watching = false;
    server.off('error', onError);
    server.off('listening', onListening);
    process.off('exit', onExit);
    if (closing && !server.listening) failed('the app closes before its HTTP server listened');
  };
  const onListening = (): void => stop();
  // Nest's listen adds its own 'error' listener (it rejects): this one is called before it.
  const onError = (error: unknown): void => {
    stop();
    failed(`its HTTP server did not listen: ${String(error)}`);
  };
  const onExit = (): void => {
    stop();
    failed('the process exits before its HTTP server listened (a boot step after SundialModule failed)');
  };
  server.once('error', onError);
  server.once('listening', onListening);
  process.once('exit', onExit);
  return stop;
}

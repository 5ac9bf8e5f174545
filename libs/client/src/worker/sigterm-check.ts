import type { SundialLogger } from '@sundial/core';

export const SIGTERM_CHECK = Symbol('sundial:sigterm-check');

/** Arms the check for the worker `workerId`; returns the function that disarms it. */
export type SigtermCheck = (workerId: string) => () => void;

/**
 * How long after its runner starts the worker looks for a SIGTERM listener. Not at once: the start runs
 * inside `app.listen()` (or `app.init()`), and many a main.ts calls `app.enableShutdownHooks()` only after
 * `await app.listen()`, or after other awaits of its own (`startAllMicroservices()`, a log line): 5 s
 * leaves those their time, and still says it among the app's start lines, long before a rollout comes.
 */
const SIGTERM_CHECK_MS = 5000;

/** Said once per process, however many apps in it run a worker. */
let said = false;

/**
 * The check of docs/spec.md §5.1: an app that embeds the worker without `app.enableShutdownHooks()` (the
 * most common Nest mistake) dies at once on a SIGTERM, its runs cut off to wait out their lease, and
 * nothing said it. Any SIGTERM listener (Nest's, the app's own, the standalone apps' exitOnSignal) counts
 * as handling it. Not under a test runner (`NODE_ENV=test`, which jest and vitest set): an e2e test of the
 * app never gets a SIGTERM, and its process has no listener. The timer is unref'd: it keeps no process
 * alive.
 */
export function sigtermCheck(logger: SundialLogger): SigtermCheck {
  return (workerId) => {
    if (process.env.NODE_ENV === 'test') return () => undefined; // under a test runner: no SIGTERM comes
    const timer = setTimeout(() => {
      if (said || process.listenerCount('SIGTERM') > 0) return;
      said = true;
      logger.warn(
        'SundialWorkerModule: nothing in this process handles SIGTERM: on a SIGTERM (a Kubernetes rollout) runs in progress are cut off and wait out their lease (at-least-once: run again after leaseMs; at-most-once: recorded lost)',
        { workerId, fix: 'Call app.enableShutdownHooks() in main.ts before app.listen()' },
      );
    }, SIGTERM_CHECK_MS);
    timer.unref();
    return () => clearTimeout(timer);
  };
}

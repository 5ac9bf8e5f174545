/** How long a TimerRunner's close waits (docs/spec.md §4.6). */

/**
 * How long `close()` lets running handlers go on before their signals abort (SUNDIAL_SHUTDOWN_GRACE_MS):
 * under Kubernetes' default 30 s termination grace, with room for the hand-back and the exit.
 */
export const DEFAULT_CLOSE_GRACE_MS = 25_000;
/**
 * How long dropping BullMQ's connections may take: ioredis's disconnectTimeout (2 s) on a socket whose
 * peer never answers. A client that was waiting to reconnect never says it ended (BullMQ waits for its
 * 'end'), yet holds no socket and no timer once dropped: it is not waited for.
 */
export const DROP_WAIT_MS = 2_500;

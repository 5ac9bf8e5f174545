import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { MAX_ENV_INT } from './env';

/**
 * How long an app keeps an idle kept-alive connection (SUNDIAL_HTTP_KEEPALIVE_MS): longer than the
 * proxies in front keep theirs (nginx's `keepalive_timeout` and an AWS ALB's idle timeout: 60 s), so
 * that the proxy, not the app, closes an idle connection. With Node's 5 s, the app now and then closed
 * one at the moment the proxy sent a request on it, and the client got a 502 (docs/operations.md).
 */
export const DEFAULT_HTTP_KEEPALIVE_MS = 65_000;

/**
 * SUNDIAL_HTTP_KEEPALIVE_MS's most. Node keeps an idle socket `keepAliveTimeoutBuffer` (1 s on Node 24)
 * past the keep-alive it announces (`Keep-Alive: timeout=65`), on a timer that must fit Node's longest:
 * past it, Node warns (TimeoutOverflowWarning) and cuts it to the longest.
 */
export const MAX_HTTP_KEEPALIVE_MS = MAX_ENV_INT - 1_000;

/** How much longer than the keep-alive Node waits for a request's headers (server.headersTimeout). */
const HEADERS_AFTER_KEEPALIVE_MS = 1_000;

/** The timeouts an app's HTTP server runs with, as its `listening` line says them. */
export interface HttpTimeouts {
  keepAliveMs: number;
  headersTimeoutMs: number;
}

/**
 * Sets `server`'s keep-alive to `keepAliveMs` and its headers timeout above it: the common advice, as a
 * headers timeout under the keep-alive closed reused connections on older Node releases. Once `stopping`,
 * a connection ends when its answers are done (one begun then says `Connection: close`):
 * `server.close()` (Nest's app.close()) ends the connections it finds idle, not one busy with an answer
 * then, which was kept the whole keep-alive after it (65 s): without this, the scheduler with such a
 * connection at a SIGTERM logged "shutdown still running after 15000 ms" and exited 1
 * (test/api/http-keepalive.test.ts).
 */
export function setHttpTimeouts(server: Server, keepAliveMs: number, stopping: () => boolean): HttpTimeouts {
  server.keepAliveTimeout = keepAliveMs;
  server.headersTimeout = keepAliveMs + HEADERS_AFTER_KEEPALIVE_MS;
  const busy = new WeakMap<Socket, number>(); // answers under way on each connection
  server.prependListener('request', ({ socket }: IncomingMessage, response: ServerResponse) => {
    busy.set(socket, (busy.get(socket) ?? 0) + 1);
    if (stopping()) response.shouldKeepAlive = false;
    response.once('close', () => {
      const left = busy.get(socket)! - 1;
      busy.set(socket, left);
      // after Node's own finish of the answer: ends the connection once what was written is sent
      if (left === 0 && stopping()) socket.destroySoon();
    });
  });
  return { keepAliveMs, headersTimeoutMs: server.headersTimeout };
}

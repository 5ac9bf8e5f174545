/* eslint-disable @typescript-eslint/no-require-imports -- the module ioredis itself loads (under jest too) */
import { createHash } from 'node:crypto';

/** The part of ioredis's connector (Standalone, Sentinel) that its disconnect() uses. */
interface ConnectorInternals {
  connecting: boolean;
  stream?: { closed?: boolean };
  disconnect(): void;
}

type ConnectorClass = { prototype: ConnectorInternals };

/** The part of an ioredis client that its disconnect() uses. */
interface ClientInternals {
  status: string;
  disconnect(reconnect?: boolean): void;
}

type ClientClass = { prototype: ClientInternals };

/** sha256 (first 16 hex) of ioredis 6.0.0's `AbstractConnector#disconnect`, the code this wraps. */
const PINNED_FINGERPRINT = '1f69f5f1d9918bfc';
/** sha256 (first 16 hex) of ioredis 6.0.0's `Redis#disconnect`, the code installEndBetweenReconnects wraps. */
const PINNED_CLIENT_FINGERPRINT = 'a9db5b0179eeced6';

let installed = false;

/**
 * Why: ioredis 6.0.0's connector disconnect() ends its socket and arms a `disconnectTimeout` timer
 * (2 s) that destroys it should it stay half-open; only the socket's 'close' event clears the timer.
 * On a socket that had already closed (a refused connect, a dropped connection, a client between
 * reconnects) no 'close' comes again, and the timer keeps the process up for 2 s after everything was
 * closed. Sentinel does that on every primary look-up whose Sentinel was unreachable (each look-up's
 * client is disconnected, closed or not): test/cluster/start-wait-topologies.test.ts ended with ~30 such
 * timers, and jest force-exited its worker ("A worker process has failed to exit gracefully").
 * A socket that has closed needs neither the end nor the timer: only it is skipped. Installed once per
 * process, and only on the code it was written against (else nothing changes: the timers stay).
 */
export function installClosedSocketDisconnect(): void {
  if (installed) return;
  installed = true;
  installEndBetweenReconnects();
  const Connector = (require('ioredis/built/connectors/AbstractConnector') as { default: ConnectorClass })
    .default;
  const disconnect = Connector.prototype.disconnect;
  const found = createHash('sha256').update(String(disconnect)).digest('hex').slice(0, 16);
  if (found !== PINNED_FINGERPRINT) return;
  Connector.prototype.disconnect = function (this: ConnectorInternals): void {
    if (this.stream?.closed) this.connecting = false;
    else disconnect.call(this);
  };
}

/**
 * Why: ioredis 6.0.0's disconnect() of a client between reconnects (status `reconnecting`: its socket
 * closed, a retry timer pending) clears the timer and ends the connector, whose socket already closed:
 * no 'close' comes, so the client never reaches `end`, never emits 'end', and its offline queue is
 * never flushed. BullMQ's RedisConnection.disconnect() waits for that 'end', and a Worker's close()
 * for its blocking connection's: with Redis away, the stock worker's SIGTERM (its @nestjs/bullmq
 * workers) hung until the process's own deadline, grace + 15 s, and exited 1. Such a client is closed
 * now as ioredis closes one that never connected (`wait`): its close handler, which ends it.
 */
function installEndBetweenReconnects(): void {
  const Client = (require('ioredis/built/Redis') as { default: ClientClass }).default;
  const { closeHandler } = require('ioredis/built/redis/event_handler') as {
    closeHandler: (client: ClientInternals) => () => void;
  };
  const disconnect = Client.prototype.disconnect;
  const found = createHash('sha256').update(String(disconnect)).digest('hex').slice(0, 16);
  if (found !== PINNED_CLIENT_FINGERPRINT) return;
  Client.prototype.disconnect = function (this: ClientInternals, reconnect = false): void {
    const between = !reconnect && this.status === 'reconnecting';
    disconnect.call(this, reconnect);
    if (between && this.status === 'reconnecting') closeHandler(this)();
  };
}

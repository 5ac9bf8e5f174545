/* eslint-disable @typescript-eslint/no-require-imports -- the module ioredis itself loads (under jest too) */
import { createHash } from 'node:crypto';

/** The part of ioredis's connector (Standalone, Sentinel) that its disconnect() uses. */
interface ConnectorInternals {
  connecting: boolean;
  stream?: { closed?: boolean };
  disconnect(): void;
}

type ConnectorClass = { prototype: ConnectorInternals };

/** sha256 (first 16 hex) of ioredis 6.0.0's `AbstractConnector#disconnect`, the code this wraps. */
const PINNED_FINGERPRINT = '1f69f5f1d9918bfc';

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

/* eslint-disable @typescript-eslint/no-require-imports -- the modules ioredis itself loads (under jest too) */
import { createHash } from 'node:crypto';

/** A socket a Sentinel connector's look-up opened to the primary it was told of. */
interface LookedUpStream {
  destroy(): void;
}

/** The part of ioredis's Sentinel connector that its connect() and the failover detector use. */
interface SentinelConnectorInternals {
  connect(emitter: unknown): Promise<LookedUpStream>;
  disconnect(): void;
  /** Sundial's: a connect() (its look-ups of the primary at the Sentinels) is running. */
  lookingUp?: boolean;
  /** Sundial's: a Sentinel announced a new primary while it ran. */
  switchedDuringLookUp?: boolean;
}

/** ioredis's FailoverDetector: `+switch-master` from any Sentinel calls disconnect() (once per detector). */
interface FailoverDetectorInternals {
  connector: SentinelConnectorInternals;
  isDisconnected: boolean;
  cleanup(): void;
  disconnect(): void;
}

type Prototyped<Internals> = { prototype: Internals };

/** sha256 (first 16 hex) of ioredis 6.0.0's `SentinelConnector#connect` and `FailoverDetector#disconnect`. */
const PINNED = { connect: '4e5cdee8008c37a2', disconnect: '0056c84d17a17aae' };

let installed = false;

/**
 * Why: ioredis 6.0.0's Sentinel failover detector (option `failoverDetector`, which Sundial sets:
 * connection.ts followFailovers) answers `+switch-master` with its connector's disconnect(), which
 * stops the connector's connecting. A connection whose primary died is reconnecting, and its detector
 * (made at its last connect) still listens: when the announcement comes while it is looking the primary
 * up at a Sentinel (a round trip each reconnect, long in a CPU-starved process), that look-up throws
 * "Connection is closed." and ioredis ends the connection for good (status `end`): no reconnect, every
 * command refused. Under load it took the readiness probe's connection (503 on a primary that was back)
 * and BullMQ's (timers left unrun): test/cluster/sentinel-failover.test.ts, and
 * test/redis/sentinel-switch-lookup.test.ts. Now an announcement heard during a look-up lets it go on,
 * and the look-up runs again once it ends (the Sentinel it asked may have answered the old primary),
 * as docs/spec.md §4.7 requires: every connection leaves the old primary at the announcement. Anywhere
 * else (a socket to a primary open or opening, a reconnect's wait) the detector acts as before.
 * Installed once per process, and only on the code it was written against (else nothing changes).
 */
export function installFailoverDuringLookUp(): void {
  if (installed) return;
  installed = true;
  const Connector = (
    require('ioredis/built/connectors/SentinelConnector') as {
      default: Prototyped<SentinelConnectorInternals>;
    }
  ).default;
  const { FailoverDetector: Detector } =
    require('ioredis/built/connectors/SentinelConnector/FailoverDetector') as {
      FailoverDetector: Prototyped<FailoverDetectorInternals>;
    };
  const connect = Connector.prototype.connect;
  const disconnect = Detector.prototype.disconnect;
  if (fingerprint(connect) !== PINNED.connect || fingerprint(disconnect) !== PINNED.disconnect) return;

  Connector.prototype.connect = async function (this: SentinelConnectorInternals, emitter: unknown) {
    this.lookingUp = true;
    try {
      for (;;) {
        this.switchedDuringLookUp = false;
        const stream = await connect.call(this, emitter);
        if (!this.switchedDuringLookUp) return stream;
        // Told of the primary before the announcement, maybe the old one: asked again. Not connected
        // yet, so no detector was made for this socket, and its 'close' has no listener but ioredis's.
        stream.destroy();
      }
    } finally {
      this.lookingUp = false;
    }
  };
  Detector.prototype.disconnect = function (this: FailoverDetectorInternals): void {
    if (!this.connector.lookingUp) return disconnect.call(this);
    // Heard once per detector, as ioredis does; its Sentinel connections are closed, as its disconnect would.
    this.isDisconnected = true;
    this.connector.switchedDuringLookUp = true;
    this.cleanup();
  };
}

function fingerprint(code: unknown): string {
  return createHash('sha256').update(String(code)).digest('hex').slice(0, 16);
}

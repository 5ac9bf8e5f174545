import { fingerprint, sentinelConnectorPrototype } from './ioredis-sentinel-connector';

/** The part of ioredis's Sentinel connector that makes and ends its failover detector. */
interface SentinelConnectorInternals {
  /** the client the connector belongs to (ioredis sets it when it makes the connector) */
  emitter: { on(event: 'end', listener: () => void): unknown } | null;
  failoverDetector: { cleanup(): void } | null;
  initFailoverDetector(): Promise<void>;
  /** Sundial's: the client's 'end' ends the detector (listened to once per connector). */
  detectorEndsWithClient?: boolean;
}

/** sha256 (first 16 hex) of ioredis 6.0.0's `SentinelConnector#initFailoverDetector`, the code this wraps. */
const PINNED_FINGERPRINT = 'fcae598fe2ea74fe';

let installed = false;

/**
 * Why: ioredis 6.0.0's Sentinel failover detector (option `failoverDetector`, which Sundial sets:
 * connection.ts followFailovers) is made each time a socket to the primary connects: one subscriber
 * connection to each Sentinel, reconnecting every 60 s (`sentinelReconnectStrategy`) for as long as it
 * lives. Only the connector's disconnect() ends it, and a connection can end without that: closed by
 * QUIT (Redis closes the socket: BullMQ's close of a connection of its own, any `quit()`), or closed
 * while its socket to the primary was still opening (the socket's 'connect' comes after the close
 * began and makes a detector then). Its Sentinel connections then outlived their owner's close: open
 * while the Sentinels ran, then a 60 s reconnect timer each, so a closed process did not exit (jest
 * hung after test/cluster/start-wait-topologies.test.ts with three of them). The connection's 'end'
 * now ends its detector too (test/redis/sentinel-detector-end.test.ts). Installed once per process,
 * and only on the code it was written against (else nothing changes).
 */
export function installDetectorEndsWithConnection(): void {
  if (installed) return;
  installed = true;
  const connector = sentinelConnectorPrototype<SentinelConnectorInternals>();
  const init = connector.initFailoverDetector;
  if (fingerprint(init) !== PINNED_FINGERPRINT) return;
  connector.initFailoverDetector = function (this: SentinelConnectorInternals): Promise<void> {
    const client = this.emitter;
    if (client && !this.detectorEndsWithClient) {
      this.detectorEndsWithClient = true;
      // One listener for the client's life: it ends whichever detector is the connector's then (a
      // cleaned one again: its Sentinel connections have ended, so that does nothing).
      client.on('end', () => this.failoverDetector?.cleanup());
    }
    return init.call(this);
  };
}

import { fingerprint, sentinelConnectorPrototype } from './ioredis-sentinel-connector';

/** A connection to one Sentinel, as the connector makes it to look the primary up. */
interface SentinelClient {
  on(event: 'error', listener: (error: Error) => void): unknown;
}

/** The part of ioredis's Sentinel connector that looks the primary up at one Sentinel. */
interface SentinelConnectorInternals {
  resolve(endpoint: unknown): Promise<unknown>;
  connectToSentinel(endpoint: unknown, options?: unknown): SentinelClient;
}

/** sha256 (first 16 hex) of ioredis 6.0.0's `SentinelConnector#resolve`, the code this wraps. */
const PINNED_FINGERPRINT = 'fcc534e966c02e51';
/** What ioredis rejects a command with once its connection closed (no reconnect to a Sentinel). */
const CLOSED = 'Connection is closed.';

let installed = false;

/**
 * Why: ioredis 6.0.0 asks each Sentinel for the primary on a connection of its own whose errors it
 * ignores, so a Sentinel that refused the connection was told as `Connection is closed.` (the look-up
 * command's error once the socket closed), and the client's error, which a start waiting for Redis
 * names (wait-for-redis.ts), said `All sentinels are unreachable. … Last error: Connection is closed.`
 * A look-up that failed that way now fails with that connection's own error (`connect ECONNREFUSED
 * 127.0.0.1:26379`, `getaddrinfo ENOTFOUND sentinel-0`), which ioredis then puts after `Last error:`.
 * Installed once per process, and only on the code it was written against (else nothing changes).
 */
export function installSentinelLookUpCause(): void {
  if (installed) return;
  installed = true;
  const connector = sentinelConnectorPrototype<SentinelConnectorInternals>();
  const { resolve, connectToSentinel } = connector;
  if (fingerprint(resolve) !== PINNED_FINGERPRINT) return;
  connector.resolve = async function (this: SentinelConnectorInternals, endpoint: unknown) {
    let socketError: Error | undefined;
    // resolve() makes its one Sentinel connection before its first await: heard for this look-up only
    this.connectToSentinel = (...args) => {
      const client = connectToSentinel.apply(this, args);
      client.on('error', (error) => (socketError = error));
      return client;
    };
    const looking = resolve.call(this, endpoint);
    delete (this as Partial<SentinelConnectorInternals>).connectToSentinel;
    try {
      return await looking;
    } catch (error) {
      throw (error as Error | undefined)?.message === CLOSED && socketError ? socketError : error;
    }
  };
}

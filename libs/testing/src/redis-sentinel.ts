import { Redis } from 'ioredis';
import { type RedisServer, startRedis } from './redis-server';
import type { TestCerts } from './test-certs';
import { waitFor } from './wait-for';

/** A private primary, its replica and three Sentinels watching them. */
export interface RedisSentinels {
  /** `redis[s]+sentinel://127.0.0.1:s1,…/<name>[?sentinelPassword=…]`: what REDIS_URL takes */
  url: string;
  name: string;
  primary: RedisServer;
  replica: RedisServer;
  sentinels: RedisServer[];
  /** With `tls`: the CA file that signed the servers' certificate (for NODE_EXTRA_CA_CERTS). */
  tlsCa?: string;
  /** The port of the primary the Sentinels name now. */
  primaryPort(): Promise<number>;
  stop(): Promise<void>;
}

const NAME = 'sundial';

/**
 * Starts a primary, one replica of it and three `redis-server --sentinel` (quorum 2, a primary is down
 * after 1 s of silence), and resolves once the Sentinels know the replica and each other, so a
 * failover can happen. With `sentinelPassword` the Sentinels require it (`requirepass`), Redis does not.
 * With `tls` each server listens with TLS too, on a port of its own, the replica and the Sentinels reach
 * the primary on it, and `url` names the Sentinels' (`rediss+sentinel://`); `port`s stay the plain ones.
 */
export async function startRedisSentinels({
  sentinelPassword,
  tls,
}: { sentinelPassword?: string; tls?: TestCerts } = {}): Promise<RedisSentinels> {
  const tlsArgs =
    tls === undefined
      ? undefined
      : (tlsPort: number): string[] => [
          ...['--tls-port', String(tlsPort), '--tls-cert-file', tls.cert, '--tls-key-file', tls.key],
          ...['--tls-ca-cert-file', tls.ca, '--tls-auth-clients', 'no', '--tls-replication', 'yes'],
        ];
  const primary = await startRedis({ tlsArgs });
  const primaryPort = primary.tlsPort ?? primary.port;
  const replica = await startRedis({ args: ['--replicaof', '127.0.0.1', String(primaryPort)], tlsArgs });
  const sentinels = await Promise.all(
    Array.from({ length: 3 }, () =>
      startRedis({
        config: [
          `sentinel monitor ${NAME} 127.0.0.1 ${primaryPort} 2`,
          `sentinel down-after-milliseconds ${NAME} 1000`,
          `sentinel failover-timeout ${NAME} 5000`,
          ...(sentinelPassword === undefined ? [] : [`requirepass ${sentinelPassword}`]),
          '',
        ].join('\n'),
        args: ['--sentinel'],
        tlsArgs,
      }),
    ),
  );
  const servers = [primary, replica, ...sentinels];
  const stop = () => Promise.all(servers.map((server) => server.stop())).then(() => undefined);
  const ask = (sentinel: RedisServer) => new Redis(sentinel.url, { password: sentinelPassword });
  const asking = sentinels.map(ask);
  try {
    await waitFor(
      async () => {
        const views = await Promise.all(
          asking.map(async (sentinel) => {
            const [master] = (await sentinel.call('SENTINEL', 'MASTERS')) as string[][];
            const field = (name: string) => Number(master[master.indexOf(name) + 1]);
            return field('num-slaves') === 1 && field('num-other-sentinels') === 2;
          }),
        );
        return views.every(Boolean);
      },
      { timeoutMs: 30_000, intervalMs: 100, what: 'the Sentinels to know the replica and each other' },
    );
  } catch (error) {
    await stop();
    throw error;
  } finally {
    for (const sentinel of asking) sentinel.disconnect();
  }
  return {
    url: `${tls ? 'rediss' : 'redis'}+sentinel://${sentinels
      .map((sentinel) => `127.0.0.1:${sentinel.tlsPort ?? sentinel.port}`)
      .join(',')}/${NAME}${
      sentinelPassword === undefined ? '' : `?sentinelPassword=${encodeURIComponent(sentinelPassword)}`
    }`,
    name: NAME,
    tlsCa: tls?.ca,
    primary,
    replica,
    sentinels,
    primaryPort: async () => {
      const sentinel = ask(sentinels[0]);
      try {
        const [, port] = (await sentinel.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', NAME)) as string[];
        return Number(port);
      } finally {
        sentinel.disconnect();
      }
    },
    stop,
  };
}

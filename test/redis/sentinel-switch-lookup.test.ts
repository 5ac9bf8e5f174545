import { closeRedis, openRedis, type RedisClient } from '@sundial/redis';
import { CommandGate, type RedisSentinels, startRedisSentinels, waitFor } from '@sundial/testing/harness';

/** What a connection's Sentinel failover detector shows: whether it has acted on `+switch-master`. */
interface DetectorInternals {
  connector: { failoverDetector: { isDisconnected: boolean } | null };
}

/**
 * A connection through Sentinel whose primary died is between reconnects, looking up the primary at a
 * Sentinel, when a Sentinel announces the promotion (`+switch-master`): a process slow to get an answer
 * (a CPU-starved one, a slow Sentinel) spends much of each reconnect there. The announcement must send
 * it to the new primary (docs/spec.md §4.7). ioredis 6.0.0's failover detector ended that look-up
 * instead, and with it the connection for good (status `end`, every command "Connection is closed."):
 * readiness answered 503 and BullMQ's connections stopped, on a primary that was back
 * (test/cluster/sentinel-failover.test.ts under load). The look-up is held here by a proxy in front of
 * the Sentinel the connection asks, until the announcement was heard.
 */
describe('a Sentinel announcing the new primary during a look-up', () => {
  let redis: RedisSentinels;
  let gate: CommandGate;
  let connection: RedisClient | undefined;

  beforeAll(async () => {
    redis = await startRedisSentinels();
    // The connection asks its Sentinels for the primary through the gate (the URL names it alone).
    gate = await CommandGate.start(redis.sentinels[0], /get-master-addr-by-name/i);
    gate.release();
  }, 60_000); // deadline: five redis-servers and the Sentinels knowing each other, on a loaded host

  afterAll(async () => {
    if (connection) await closeRedis(connection);
    await gate?.stop();
    await redis?.stop();
  });

  it('follows it to the promoted replica', async () => {
    connection = openRedis(`redis+sentinel://127.0.0.1:${gate.port}/${redis.name}`);
    // its failover detector subscribes to every Sentinel once the socket to the primary is up
    await new Promise((resolve) => connection!.once('failoverSubscribed', resolve));
    expect(await connection.ping()).toBe('PONG');

    const lookUpHeld = gate.holdNext();
    redis.primary.kill();
    await lookUpHeld;
    // deadline: Sentinel's 1 s to call the primary down, then its election and the promotion
    await waitFor(async () => (await redis.primaryPort()) === redis.replica.port, {
      timeoutMs: 30_000,
      intervalMs: 100,
      what: 'the Sentinels to promote the replica',
    });
    const detector = () => (connection as unknown as DetectorInternals).connector.failoverDetector;
    await waitFor(async () => detector()?.isDisconnected === true, {
      timeoutMs: 10_000, // deadline: each Sentinel announces once it switched, within its 2 s hello
      what: 'the connection to hear +switch-master while it looks the primary up',
    });
    gate.release();

    // deadline: a reconnect's look-up and connect, on a loaded host
    await waitFor(async () => connection!.status === 'ready' || connection!.status === 'end', {
      timeoutMs: 10_000,
      what: 'the connection to connect again',
    });
    expect(connection.status).toBe('ready');
    const port = Number(/^tcp_port:(\d+)/m.exec(await connection.info('server'))?.[1]);
    expect(port).toBe(redis.replica.port);
  }, 90_000);
});

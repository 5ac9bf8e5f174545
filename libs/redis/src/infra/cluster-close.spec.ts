import { once } from 'node:events';
import { freePort } from '@sundial/testing/harness';
import type { Cluster } from 'ioredis';
import { closeRedis, openRedis } from './connection';

/** A Cluster client of `hosts`; a minute between its attempts: a close comes while it waits to reconnect. */
function cluster(hosts: string): Cluster {
  return openRedis(`redis+cluster://${hosts}`, { retryStrategy: () => 60_000 }) as Cluster;
}

/** Its first wait to reconnect (events.once would reject at its first 'error'). */
function reconnecting(client: Cluster): Promise<unknown> {
  return new Promise((resolve) => client.once('reconnecting', resolve));
}

/**
 * ioredis 6.0.0 ends a closed Cluster client when its last node connection ends (cluster-close.ts). One
 * closed while it held none stayed `disconnecting` for good: no 'end', its queued commands never answered.
 */
describe('closing a Redis Cluster client that is not connected', () => {
  it('ends one waiting to reconnect (every node refused it): its queue rejected', async () => {
    const client = cluster(`127.0.0.1:${await freePort()}`);
    const ping = client.ping();
    await reconnecting(client);
    await closeRedis(client);
    expect(client.status).toBe('end');
    await expect(ping).rejects.toThrow('None of startup nodes is available');
  });

  it("ends one still resolving its startup nodes' host names", async () => {
    const client = cluster(`localhost:${await freePort()}`);
    const ping = client.ping();
    expect(client.status).toBe('connecting');
    await closeRedis(client);
    expect(client.status).toBe('end');
    await expect(ping).rejects.toThrow('None of startup nodes is available');
  });

  it("disconnect() and quit() end it, as BullMQ closes its connections (disconnect() waits for the 'end')", async () => {
    for (const close of [(client: Cluster) => client.disconnect(), (client: Cluster) => client.quit()]) {
      const client = cluster(`127.0.0.1:${await freePort()}`);
      await reconnecting(client);
      const ended = once(client, 'end');
      await close(client);
      await ended;
      expect(client.status).toBe('end');
    }
  });
});

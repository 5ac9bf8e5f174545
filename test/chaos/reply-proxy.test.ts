import { type RedisServer, startRedis, waitFor } from '@sundial/testing/harness';
import Redis from 'ioredis';
import { ReplyProxy, type SentCommand } from './reply-proxy';

/**
 * The chaos suite's proxy on its own (its scenarios are too long for CI): bytes pass both ways, each
 * command is watched, the one reply a rule names is dropped after Redis ran it, and a connection's two
 * halves end together (@sundial/testing's proxiedSocket).
 */
describe('chaos ReplyProxy', () => {
  let server: RedisServer;
  let proxy: ReplyProxy;
  let raw: Redis;

  beforeAll(async () => {
    server = await startRedis();
    proxy = await ReplyProxy.start(server.port);
    raw = new Redis(server.url);
  });
  afterAll(async () => {
    raw?.disconnect();
    await proxy?.stop();
    await server?.stop();
  });

  /** The clients connected to Redis with `name` (CLIENT SETNAME through the proxy). */
  async function named(name: string): Promise<number> {
    const list = (await raw.client('LIST')) as string;
    return list.split('\n').filter((line) => line.includes(` name=${name} `)).length;
  }

  it('passes commands and replies, watched; drops the named reply after Redis ran it, ending both halves', async () => {
    const seen: SentCommand[] = [];
    proxy.watch((command) => seen.push(command));
    const client = new Redis(proxy.url, {
      connectionName: 'proxied',
      maxRetriesPerRequest: 0,
      retryStrategy: () => null, // a dropped reply ends the connection: no reconnect
    });
    try {
      await client.set('k', '1');
      expect(await client.get('k')).toBe('1');
      expect(seen).toContainEqual(['SET', 'k', '1']);
      expect(await named('proxied')).toBe(1);

      proxy.dropReplyTo({ matches: (command) => command[0] === 'INCR' });
      await expect(client.incr('k')).rejects.toThrow();
      expect(proxy.dropped).toBe(1);
      expect(await raw.get('k')).toBe('2'); // Redis ran it; only its reply was lost
      // the client's half closed: the proxy ends the upstream half too
      await waitFor(async () => (await named('proxied')) === 0 || undefined, {
        timeoutMs: 2_000, // deadline
        what: "the proxy's upstream connection to end",
      });
    } finally {
      proxy.watch(undefined);
      // not once ended: ioredis's disconnect of a closed stream arms a 2 s timer nothing clears
      if (client.status !== 'end') client.disconnect();
    }
  });
});

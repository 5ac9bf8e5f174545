import { Dispatcher, TimerRunner } from '@sundial/redis';
import { freePort, type RedisServer, startRedis } from '@sundial/testing/harness';
import { Redis } from 'ioredis';
import { closeDuring, closedWhileStarting as closed, closeEachWhileWaiting } from './close-during-fixture';
import { recordingLogger } from './library-host-fixture';

/**
 * A service shut down while it starts (a SIGTERM during a boot that waits for Redis, or for its
 * subscription): close() or dispose() comes before start() or connect() is done. Before, the start went on
 * pinging its closed connection, logged `waiting up to 30000 ms for Redis before starting: Connection is
 * closed.`, held the process up for 30 s and then blamed Redis (`Redis did not answer within 30000 ms at
 * start`, reason unavailable); a start waiting for its subscription did the same (`could not subscribe …
 * within 30000 ms`). Now it stops at once with reason `disposed`.
 */
describe('close() while start() is under way', () => {
  let server: RedisServer;
  let admin: Redis;

  beforeAll(async () => {
    server = await startRedis();
    admin = new Redis(server.url);
  });
  afterAll(async () => {
    admin?.disconnect();
    await server?.stop();
  });

  // Nothing listens at the port: a Cluster client finds none of its startup nodes and waits to reconnect
  // (it stayed `disconnecting` when closed then, infra/cluster-close.ts), a Sentinel one finds no Sentinel.
  it.each([
    ['one node', (port: number) => `redis://127.0.0.1:${port}`],
    ['a Redis Cluster', (port: number) => `redis+cluster://127.0.0.1:${port}`],
    ['Sentinel', (port: number) => `redis+sentinel://127.0.0.1:${port}/sundial`],
  ])(
    'a start waiting for Redis (%s) stops at close: Dispatcher, TimerRunner, RedisTimers.connect()',
    async (_, url) => {
      expect(await Promise.all(closeEachWhileWaiting(url(await freePort())))).toEqual([
        closed,
        closed,
        closed,
      ]);
    },
    45_000,
  );

  it('a start waiting for its subscription stops at close: Dispatcher, TimerRunner', async () => {
    // A user with every command and key but no channel: SUBSCRIBE answers NOPERM and is tried again.
    await admin.acl('SETUSER', 'nosub', 'on', '>pw', '~*', '+@all', 'resetchannels');
    const connection = `redis://nosub:pw@127.0.0.1:${server.port}`;
    const dispatcherLog = recordingLogger();
    const dispatcher = new Dispatcher({ connection, prefix: 'cws', logger: dispatcherLog });
    const runnerLog = recordingLogger();
    const runner = new TimerRunner({ connection, prefix: 'cws', handlers: {}, logger: runnerLog });
    const refused = 'Sundial could not subscribe to';
    expect(
      await Promise.all([
        closeDuring(dispatcher.start(), dispatcherLog, refused, () => dispatcher.close()),
        closeDuring(runner.start(), runnerLog, refused, () => runner.close(0)),
      ]),
    ).toEqual([closed, closed]);
    await admin.acl('DELUSER', 'nosub');
  }, 45_000);
});

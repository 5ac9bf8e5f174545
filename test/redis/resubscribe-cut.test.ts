import { type RedisServer, ReplyDropper, startRedis, waitFor } from '@sundial/testing/harness';
import {
  type PubsubStack,
  startPubsubStack,
  subscriberCounts,
  sundialChannels,
  unheard,
} from './pubsub-fixture';

/** How long the redis-server stays down after it is killed (SIGKILL). */
const OUTAGE_MS = 500;
/**
 * After the cut, connections are refused this long: longer than the subscribers' reconnect attempts take
 * to reach maxRetriesPerRequest (1 for RedisTimers, 2 here for the dispatcher and runner: ~150 ms; ~10 s at
 * ioredis's default 20), when ioredis rejects the commands it still holds — the re-SUBSCRIBE among them.
 */
const REFUSE_MS = 1_500;
const PARTITIONS = 2;
const BACK_WITHIN_MS = 20_000;

/**
 * A connection that drops again while it is re-subscribed after a reconnect (Redis flapping): the
 * redis-server is killed (SIGKILL) and started again, and as a subscriber connection sends its
 * re-SUBSCRIBE the proxy in front of Redis cuts it, before any confirmation, then refuses connections for
 * a while. ioredis re-subscribed after a reconnect only what the connection had confirmed, and held the
 * unconfirmed re-SUBSCRIBE with its other unanswered commands: rejected once the reconnects reached
 * maxRetriesPerRequest, it was never sent again, and the channel stayed unsubscribed for good (a second
 * drop shorter than that is harmless: ioredis sends the held command again). The rejection of that
 * promise, held by no one, also ended a plain Node process (jest reports it as the test's failure). Each
 * subscriber in turn: RedisTimers' events, the runner's aborts, the dispatcher's wakes; each fails
 * without infra/subscription.ts.
 */
describe('a re-SUBSCRIBE cut before Redis confirmed it', () => {
  let server: RedisServer;
  let proxy: ReplyDropper;
  let stack: PubsubStack;

  beforeAll(async () => {
    server = await startRedis();
    proxy = await ReplyDropper.start({ port: server.port });
    stack = await startPubsubStack('rc', PARTITIONS, proxy.url, { url: proxy.url, maxRetriesPerRequest: 2 });
  }, 60_000);

  afterAll(async () => {
    await stack?.close();
    await proxy?.stop();
    await server?.stop();
  });

  const subscribers = () => subscriberCounts([server], sundialChannels(stack.timers, PARTITIONS));

  it.each([
    ['P:events (RedisTimers)', 'events', () => stack.timers.keys.eventsChannel],
    ['P:abort (TimerRunner)', 'abort', () => stack.timers.keys.abortChannel],
    ['the wake channels (Dispatcher)', 'wake', () => `${stack.timers.keys.base(0)}wake`],
  ])(
    '%s: subscribed again and heard',
    async (_, name, channelOf) => {
      const channel = channelOf();
      const before = await subscribers();
      expect(new Set(Object.values(before))).toEqual(new Set([1]));
      expect(await unheard(stack, `${name}-before`)).toEqual([]);

      const cuts = proxy.dropped;
      proxy.dropReplyTo({
        matches: (sent) => sent[0] === 'SUBSCRIBE' && sent.includes(channel),
        refuseMs: REFUSE_MS,
      });
      server.kill();
      await server.restart(OUTAGE_MS);
      await waitFor(() => proxy.dropped === cuts + 1, { timeoutMs: BACK_WITHIN_MS, what: 'the cut' });
      await proxy.listening();

      await waitFor(async () => JSON.stringify(await subscribers()) === JSON.stringify(before), {
        timeoutMs: BACK_WITHIN_MS,
        intervalMs: 200,
        what: 'every subscription back',
      }).catch(async (error: Error) => {
        throw new Error(`${error.message}: ${JSON.stringify(await subscribers())}`);
      });
      // The write path is back too (a write first: the outage lost the layout a read would check).
      await waitFor(
        () =>
          stack.timers.schedule({ key: 'probe', handler: 'h', delay: '1h' }).then(
            () => true,
            () => false,
          ),
        { timeoutMs: BACK_WITHIN_MS, what: 'the client to serve again' },
      );
      expect(await unheard(stack, `${name}-after`)).toEqual([]);
    },
    90_000,
  );
});

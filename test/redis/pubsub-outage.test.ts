import { silentLogger, type TimerEvent } from '@sundial/core';
import { RedisTimers } from '@sundial/redis';
import { connects, type RedisServer, startRedis, startRedisCluster, waitFor } from '@sundial/testing/harness';
import {
  type PubsubStack,
  startPubsubStack,
  subscriberCounts,
  sundialChannels,
  unheard,
} from './pubsub-fixture';
import { topologiesSideBySide } from './topologies-side-by-side';

/** How long every node stays down (no AOF: the data is gone; a cluster keeps its slots in nodes.conf). */
const OUTAGE_MS = 2_000;
const PARTITIONS = 2;
/** Reconnects are at most 2 s apart; a cluster reports `cluster_state:fail` for a while after a restart. */
const BACK_WITHIN_MS = 20_000;

interface Topology {
  url: string;
  nodes: RedisServer[];
  /** the client, runner and dispatcher on it (pubsub-fixture.ts) */
  stack: PubsubStack;
  stop(): Promise<void>;
}

/** The servers `start` starts, with a pub/sub stack on them. */
async function withStack(start: () => Promise<Omit<Topology, 'stack'>>): Promise<Topology> {
  const servers = await start();
  const stack = await startPubsubStack('po', PARTITIONS, servers.url).catch(async (error: unknown) => {
    await servers.stop();
    throw error;
  });
  return {
    ...servers,
    stack,
    async stop() {
      await stack.close();
      await servers.stop();
    },
  };
}

const topologies: [string, () => Promise<Topology>][] = [
  [
    'a single redis-server',
    () =>
      withStack(async () => {
        const server = await startRedis();
        return { url: server.url, nodes: [server], stop: () => server.stop() };
      }),
  ],
  ['a Redis Cluster of 3 primaries', () => withStack(() => startRedisCluster(3))],
];

/**
 * Sundial's pub/sub after every node was shut down and started again: a client's event listeners
 * (`P:events`), a runner's aborts (`P:abort`) and a dispatcher's wakes (`P:{pN}:wake`) are heard again,
 * as soon as the nodes are back — not only at the next lease renewal or safety-net pass (pubsub-fixture.ts).
 * They are: Sundial re-subscribes a node connection each time it is ready (infra/subscription.ts), and ioredis
 * a Cluster's pub/sub connection (ClusterSubscriber) when it re-makes it, on whichever node it picks (so a
 * node's CLIENT LIST may show fewer subscribers than before: count over every node). A guard: with either
 * re-subscription off, the first test fails. The second failed before a SUBSCRIBE refused during an outage
 * was tried again (client/event-subscriber.ts, now infra/subscription.ts). The topologies' cases run
 * side by side, in turn on one topology (topologiesSideBySide): most of each is the outage's wait.
 */
describe('pub/sub once every node is back', () => {
  const { inTurn } = topologiesSideBySide(topologies);

  const subscribers = ({ nodes, stack }: Topology) =>
    subscriberCounts(nodes, sundialChannels(stack.timers, PARTITIONS));

  it.concurrent.each(topologies)(
    'on %s: hears events, wakes and aborts again',
    (name) =>
      inTurn(name, async (topology) => {
        const { stack } = topology;
        const before = await subscribers(topology);
        expect(Object.values(before)).not.toContain(0);
        expect(await unheard(stack, 'before')).toEqual([]);

        await Promise.all(topology.nodes.map((node) => node.restart(OUTAGE_MS)));
        // A write, not a read: a read that finds nothing checks the layout, which the outage lost.
        await waitFor(
          () =>
            stack.timers.schedule({ key: 'probe', handler: 'h', delay: '1h' }).then(
              () => true,
              () => false,
            ),
          {
            timeoutMs: BACK_WITHIN_MS,
            what: 'the client to serve again',
          },
        );
        await waitFor(async () => JSON.stringify(await subscribers(topology)) === JSON.stringify(before), {
          timeoutMs: BACK_WITHIN_MS,
          intervalMs: 200,
          what: 'every subscription back',
        }).catch(async (error: Error) => {
          throw new Error(
            `${error.message}: ${JSON.stringify(await subscribers(topology))}, before ${JSON.stringify(before)}`,
          );
        });
        expect(await unheard(stack, 'after')).toEqual([]);
      }),
    90_000,
  );

  it.concurrent.each(topologies)(
    'on %s: hears events on a client whose first listener came while Redis was down',
    (name) =>
      inTurn(name, async (topology) => {
        const late = new RedisTimers({
          connection: topology.url,
          prefix: 'po',
          partitions: PARTITIONS,
          logger: silentLogger,
        });
        try {
          const heard: TimerEvent[] = [];
          const outage = Promise.all(topology.nodes.map((node) => node.restart(OUTAGE_MS)));
          await waitFor(
            async () =>
              (await Promise.all(topology.nodes.map(({ port }) => connects('127.0.0.1', port)))).every(
                (up) => !up,
              ),
            {
              what: 'every node to be down',
            },
          );
          // Its SUBSCRIBE fails long before the nodes are back: RedisTimers gives a command up after one
          // failed reconnect (at most 2 s apart).
          late.on('scheduled', (event) => heard.push(event));
          await outage;
          // A new key each time: the first write once Redis is back may come before the subscription.
          let writes = 0;
          await waitFor(
            async () => {
              const key = `late-${++writes}`;
              const written = await late.schedule({ key, handler: 'h', delay: '1h' }).catch(() => null);
              return written !== null && heard.some((event) => event.key.startsWith('late-'));
            },
            {
              timeoutMs: BACK_WITHIN_MS,
              intervalMs: 100,
              what: "the late listener to hear a 'scheduled' event",
            },
          );
        } finally {
          await late.dispose();
        }
      }),
    60_000,
  );
});

import { silentLogger } from '@sundial/core';
import { Dispatcher, openRedis, type RedisClient, RedisTimers } from '@sundial/redis';
import { type RedisServer, startRedis, startRedisCluster, waitFor } from '@sundial/testing/harness';
import { Redis } from 'ioredis';

/** Every node is down this long; the timer falls due in the middle of it. */
const OUTAGE_MS = 3_000;
const DUE_IN_MS = 1_500;
/**
 * The dispatcher's safety-net poll, longer than the default 1 s so that only a pass run when the
 * connection is ready again can meet HANDED_OVER_MS: without one the timer waits for the poll.
 */
const POLL_MS = 20_000;
/** A timer scheduled once the nodes are back is due this soon after. */
const SOON_MS = 300;
/** How soon after the nodes are back the timer is handed over: well below any poll. */
const HANDED_OVER_MS = 600;
/**
 * How late past its due the timer scheduled after the outage may be handed over: on time on an idle
 * host (the lead is 200 ms), a few ms late when the host is starved (CI at load 15); without a wake it
 * would wait for the poll, up to POLL_MS.
 */
const STARVED_MS = 250;
/** Data kept over a restart: the timer written before the outage is there after it. */
const PERSISTENT = ['--appendonly', 'yes', '--appendfsync', 'always'];
/** Reconnect attempts 50 ms apart: the connections are back within 50 ms of the nodes. */
const retryStrategy = (): number => 50;

interface Topology {
  url: string;
  nodes: RedisServer[];
  /** Resolves once the nodes serve again: they answer, and a cluster reports `cluster_state:ok`. */
  serving(): Promise<void>;
  stop(): Promise<void>;
}

/** Whether every node of a cluster reports `cluster_state:ok`. */
async function clusterOk(nodes: RedisServer[]): Promise<boolean> {
  const clients = nodes.map((node) => new Redis(node.url, { retryStrategy: () => null }));
  try {
    const states = await Promise.all(clients.map((client) => client.cluster('INFO')));
    return states.every((info) => info.includes('cluster_state:ok'));
  } catch {
    return false;
  } finally {
    for (const client of clients) client.disconnect();
  }
}

const topologies: [string, () => Promise<Topology>][] = [
  [
    'a single redis-server',
    async () => {
      const server = await startRedis({ args: PERSISTENT });
      return { url: server.url, nodes: [server], serving: async () => undefined, stop: () => server.stop() };
    },
  ],
  [
    'a Redis Cluster of 3 primaries',
    async () => {
      const cluster = await startRedisCluster(3, PERSISTENT);
      const serving = () =>
        waitFor(() => clusterOk(cluster.nodes), {
          timeoutMs: 20_000,
          intervalMs: 20,
          what: 'every node to report cluster_state:ok',
        }).then(() => undefined);
      return { ...cluster, serving };
    },
  ],
];

/**
 * A timer that fell due while every node was down is handed over as soon as they serve again. Before,
 * the dispatcher's passes during the outage failed (on a Cluster `Cluster isn't ready` until its client's
 * own 'ready') and nothing ran another pass until the safety-net poll: a timer was handed over up to a
 * poll (1 s by default) after Redis was back (docs/design.md "Redis Cluster outages"). The dispatcher
 * now runs a pass each time its connection is ready again (without it the first assertion fails: 0.9–4 s)
 * and each time its wake channels are subscribed again: a timer scheduled after that first pass but
 * before the subscriber is back has its wake unheard (without it the second failed in 1 of 12 runs,
 * 4.7 s late; a race, so not every run shows it).
 */
describe.each(topologies)('a dispatcher once every node of %s is back', (_, start) => {
  let topology: Topology;
  const closers: (() => Promise<void>)[] = [];
  let dispatcher: Dispatcher;
  let timers: RedisTimers;
  let reader: RedisClient;
  const connection = () => ({ url: topology.url, retryStrategy });

  beforeAll(async () => {
    topology = await start();
    const shared = { connection: connection(), prefix: 'dao', logger: silentLogger };
    dispatcher = new Dispatcher({ ...shared, pollMs: POLL_MS });
    timers = new RedisTimers(shared);
    closers.push(
      () => timers.dispose(),
      () => dispatcher.close(),
    );
    reader = openRedis(connection());
    closers.push(async () => reader.disconnect());
    await dispatcher.start();
  }, 60_000);

  afterAll(async () => {
    for (const close of closers.reverse()) await close();
    await topology?.stop();
  });

  /** Every node down for OUTAGE_MS; resolves when they serve again, at that time (ms). */
  async function outage(): Promise<number> {
    await Promise.all(topology.nodes.map((node) => node.restart(OUTAGE_MS)));
    await topology.serving();
    return Date.now();
  }

  /** When `key` was first seen handed over (in the partition's `armed` set), polling every 10 ms. */
  async function handedOver(key: string): Promise<number> {
    const armed = dispatcher.keys.armed(0);
    return waitFor(async () => (await reader.zscore(armed, key).catch(() => null)) !== null && Date.now(), {
      timeoutMs: POLL_MS + 5_000,
      intervalMs: 10,
      what: `the hand-off of ${key}`,
    });
  }

  it('hands over a timer that fell due during the outage within a few hundred ms, and the next by its due', async () => {
    const timer = await timers.schedule({ key: 'during', handler: 'h', delay: DUE_IN_MS });
    const backAt = await outage();
    expect(timer.dueAt).toBeLessThan(backAt);
    const handedOverAt = await handedOver('during');
    console.log(`'during' handed over ${handedOverAt - backAt} ms after the nodes were back`);
    expect(handedOverAt - backAt).toBeLessThan(HANDED_OVER_MS);

    // The dispatcher's first pass since the outage has run: a timer scheduled now is found by a wake,
    // which its subscriber hears only once subscribed again, or by a pass once it is.
    // (The first write that succeeds: the client's own connection may not be back yet.)
    const next = await waitFor(
      () => timers.schedule({ key: 'after', handler: 'h', delay: SOON_MS }).catch(() => false as const),
      { timeoutMs: 10_000, intervalMs: 10, what: 'the client to write again' },
    );
    const nextHandedOverAt = await handedOver('after');
    console.log(`'after' handed over ${nextHandedOverAt - next.dueAt} ms after its due`);
    expect(nextHandedOverAt).toBeLessThan(next.dueAt + STARVED_MS);
  }, 60_000);
});

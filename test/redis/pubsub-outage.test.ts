import { silentLogger, type TimerEvent } from '@sundial/core';
import { Dispatcher, RedisTimers, TimerRunner } from '@sundial/redis';
import { type RedisServer, startRedis, startRedisCluster, waitFor } from '@sundial/testing';
import { Redis } from 'ioredis';
import { connect } from 'node:net';
import { recorder, work } from './fire-fixture';

/** How long every node stays down (no AOF: the data is gone; a cluster keeps its slots in nodes.conf). */
const OUTAGE_MS = 2_000;
const PARTITIONS = 2;
/** Renewals every 20 s: an abort heard within ABORT_WITHIN_MS came by `P:abort`, not by a renewal. */
const LEASE_MS = 60_000;
/** The dispatcher's safety-net pass: a timer handed over within RUN_WITHIN_MS came by a wake. */
const POLL_MS = 60_000;
/** Reconnects are at most 2 s apart; a cluster reports `cluster_state:fail` for a while after a restart. */
const BACK_WITHIN_MS = 20_000;
const EVENT_WITHIN_MS = 2_000;
const RUN_WITHIN_MS = 10_000;
const ABORT_WITHIN_MS = 2_000;

/** Whether nothing listens on the node's port. */
function refuses(node: RedisServer): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(node.port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

interface Topology {
  url: string;
  nodes: RedisServer[];
  stop(): Promise<void>;
}

const topologies: [string, () => Promise<Topology>][] = [
  [
    'a single redis-server',
    async () => {
      const server = await startRedis();
      return { url: server.url, nodes: [server], stop: () => server.stop() };
    },
  ],
  ['a Redis Cluster of 3 primaries', () => startRedisCluster(3)],
];

/**
 * Sundial's pub/sub after every node was shut down and started again: a client's event listeners
 * (`P:events`), a runner's aborts (`P:abort`) and a dispatcher's wakes (`P:{pN}:wake`) are heard again,
 * as soon as the nodes are back — not only at the next lease renewal or safety-net pass. They are: ioredis
 * re-subscribes a node connection on reconnect, and a Cluster's pub/sub connection (ClusterSubscriber) when
 * it re-makes it, on whichever node it picks (so a node's CLIENT LIST may show fewer subscribers than before:
 * count over every node). A guard: with either re-subscription off, the first test fails. The second
 * failed before client/event-subscriber.ts tried a SUBSCRIBE refused during an outage again.
 */
describe.each(topologies)('pub/sub once every node of %s is back', (_, start) => {
  let topology: Topology;
  let timers: RedisTimers;
  let dispatcher: Dispatcher;
  let runner: TimerRunner;
  const events: TimerEvent[] = [];
  const job = recorder((ctx) => work(ctx.signal, LEASE_MS));

  beforeAll(async () => {
    topology = await start();
    const shared = { connection: topology.url, prefix: 'po', partitions: PARTITIONS, logger: silentLogger };
    timers = new RedisTimers(shared);
    timers.on('scheduled', (event) => events.push(event));
    dispatcher = new Dispatcher({ ...shared, pollMs: POLL_MS });
    await dispatcher.start();
    runner = new TimerRunner({ ...shared, handlers: { h: job.handler }, leaseMs: LEASE_MS });
    await runner.start();
  }, 60_000);

  afterAll(async () => {
    await runner?.close(0);
    await dispatcher?.close();
    await timers?.dispose();
    await topology?.stop();
  });

  /** Subscribers of each of Sundial's channels, over every node (a cluster's PUBSUB NUMSUB is per node). */
  async function subscribers(): Promise<Record<string, number>> {
    const channels = [
      timers.keys.eventsChannel,
      timers.keys.abortChannel,
      ...Array.from({ length: PARTITIONS }, (_, partition) => `${timers.keys.base(partition)}wake`),
    ];
    const counts = Object.fromEntries(channels.map((channel) => [channel, 0]));
    for (const node of topology.nodes) {
      const admin = new Redis(node.url);
      try {
        const reply = (await admin.pubsub('NUMSUB', ...channels)) as (string | number)[];
        for (let i = 0; i < reply.length; i += 2) counts[reply[i]] += Number(reply[i + 1]);
      } finally {
        admin.disconnect();
      }
    }
    return counts;
  }

  /**
   * What a timer scheduled now went unheard by: its `scheduled` event by the listener (`P:events`), the
   * wake by the dispatcher (no run follows) and, once it runs, its cancel's abort by the runner (`P:abort`).
   */
  async function unheard(key: string): Promise<string[]> {
    const within = <T>(probe: () => T | undefined | false, timeoutMs: number) =>
      waitFor(probe, { timeoutMs }).catch(() => undefined);
    await timers.schedule({ key, handler: 'h', delay: 0 });
    const [event, run] = await Promise.all([
      within(() => events.some((event) => event.key === key), EVENT_WITHIN_MS),
      within(() => job.calls.find((ctx) => ctx.key === key), RUN_WITHIN_MS),
    ]);
    const missed = event ? [] : ['P:events (the listener)'];
    if (!run) return [...missed, 'wake (the dispatcher: no run)'];
    await timers.cancel(key);
    const aborted = await within(() => run.signal.aborted, ABORT_WITHIN_MS);
    return aborted ? missed : [...missed, 'P:abort (the runner)'];
  }

  it('hears events, wakes and aborts again', async () => {
    const before = await subscribers();
    expect(Object.values(before)).not.toContain(0);
    expect(await unheard('before')).toEqual([]);

    await Promise.all(topology.nodes.map((node) => node.restart(OUTAGE_MS)));
    // A write, not a read: a read that finds nothing checks the layout, which the outage lost.
    await waitFor(
      () =>
        timers.schedule({ key: 'probe', handler: 'h', delay: '1h' }).then(
          () => true,
          () => false,
        ),
      {
        timeoutMs: BACK_WITHIN_MS,
        what: 'the client to serve again',
      },
    );
    await waitFor(async () => JSON.stringify(await subscribers()) === JSON.stringify(before), {
      timeoutMs: BACK_WITHIN_MS,
      intervalMs: 200,
      what: 'every subscription back',
    }).catch(async (error: Error) => {
      throw new Error(
        `${error.message}: ${JSON.stringify(await subscribers())}, before ${JSON.stringify(before)}`,
      );
    });
    expect(await unheard('after')).toEqual([]);
  }, 90_000);

  it('hears events on a client whose first listener came while Redis was down', async () => {
    const late = new RedisTimers({
      connection: topology.url,
      prefix: 'po',
      partitions: PARTITIONS,
      logger: silentLogger,
    });
    try {
      const heard: TimerEvent[] = [];
      const outage = Promise.all(topology.nodes.map((node) => node.restart(OUTAGE_MS)));
      await waitFor(async () => (await Promise.all(topology.nodes.map(refuses))).every(Boolean), {
        what: 'every node to be down',
      });
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
        { timeoutMs: BACK_WITHIN_MS, intervalMs: 100, what: "the late listener to hear a 'scheduled' event" },
      );
    } finally {
      await late.dispose();
    }
  }, 60_000);
});

import { Dispatcher, RedisTimers, TimerRunner } from '@sundial/redis';
import { type RedisServer, startRedisCluster, startRedisSentinels, waitFor } from '@sundial/testing/harness';
import { Redis } from 'ioredis';
import { libraryHost, recordingLogger } from '../redis/library-host-fixture';
import { topologiesSideBySide } from '../redis/topologies-side-by-side';

/** How long what the client first reaches stays down after the start began. */
const OUTAGE_MS = 3_000;
/** Far below the 30 s a start waits for Redis; a refusal must come well within it. */
const AT_ONCE_MS = 5_000;

interface Topology {
  /** the URL, with `credentials` (`user:password@`) when given */
  url(credentials?: string): string;
  /** every server that must know an ACL user (the data nodes) */
  dataNodes: RedisServer[];
  /** the outage: what the client reaches first goes down at once (SIGKILL), serving again OUTAGE_MS later */
  outage(): Promise<void>;
  stop(): Promise<void>;
}

const hosts = (servers: RedisServer[]) => servers.map((server) => `127.0.0.1:${server.port}`).join(',');

/** Kills every server now (SIGKILL), then starts each again on its port OUTAGE_MS later. */
function downFor(servers: RedisServer[]): Promise<void> {
  for (const server of servers) server.kill();
  return Promise.all(servers.map((server) => server.restart(OUTAGE_MS))).then(() => undefined);
}

const topologies: [string, () => Promise<Topology>][] = [
  [
    'a Redis Cluster of 3 primaries (every node down)',
    async () => {
      const cluster = await startRedisCluster(3);
      return {
        url: (credentials = '') => `redis+cluster://${credentials}${hosts(cluster.nodes)}`,
        dataNodes: cluster.nodes,
        outage: () => downFor(cluster.nodes),
        stop: () => cluster.stop(),
      };
    },
  ],
  [
    'Sentinel (every Sentinel down: the primary cannot be found)',
    async () => {
      const sentinels = await startRedisSentinels();
      return {
        url: (credentials = '') =>
          `redis+sentinel://${credentials}${hosts(sentinels.sentinels)}/${sentinels.name}`,
        dataNodes: [sentinels.primary, sentinels.replica],
        outage: () => downFor(sentinels.sentinels),
        stop: () => sentinels.stop(),
      };
    },
  ],
];

/**
 * A library host (TimerRunner, Dispatcher, RedisTimers) started on a Redis Cluster or through Sentinel
 * while that is briefly unreachable waits for it (startWaitMs, default 30 s), says once that it waits,
 * and starts once it answers; a refusal that is not an outage (a wrong password) fails at once with
 * Redis's own error. test/redis/start-wait.test.ts shows the same on one node. The topologies start side
 * by side, and the cases of one run beside those of the other (topologiesSideBySide: most of each is the
 * outage's wait), in turn on one topology: the password case once the outage case is over.
 */
describe('a library start on a Redis Cluster or through Sentinel', () => {
  const { inTurn } = topologiesSideBySide(topologies);

  it.concurrent.each(topologies)(
    'on %s: waits through a short outage, starts, and runs a timer',
    (name) =>
      inTurn(name, async (topology) => {
        const logger = recordingLogger();
        // Down before the connections are made: a Cluster client then finds none of its startup nodes.
        const downAt = Date.now();
        const outage = topology.outage();
        const shared = { connection: topology.url(), prefix: 'swt', partitions: 2, logger };
        const { runner, dispatcher, timers, runs, close } = libraryHost(shared);
        try {
          const startedAt = (start: Promise<void>) => start.then(() => Date.now());
          const starts = [
            startedAt(runner.start()),
            startedAt(dispatcher.start()),
            startedAt(timers.connect()),
          ];
          await outage;
          // Each waited for the servers (down OUTAGE_MS at least), none failed meanwhile.
          for (const at of await Promise.all(starts)) expect(at - downAt).toBeGreaterThanOrEqual(OUTAGE_MS);
          // Said once each (runner, dispatcher), though a queued ping brings no error for ~10 s.
          const waited = logger.lines.filter((line) => line.startsWith('waiting up to 30000 ms for Redis'));
          expect(waited).toHaveLength(2);
          expect(logger.lines.filter((line) => /did not answer|could not/.test(line))).toEqual([]);
          await timers.schedule({ key: 'after', handler: 'note', delay: 0 });
          await waitFor(() => runs.length > 0, { timeoutMs: 15_000, what: 'the run' });
          expect(runs).toEqual(['after']);
        } finally {
          await close();
          await outage.catch(() => undefined); // the next case of this topology finds its servers up
        }
      }),
    60_000,
  );

  it.concurrent.each(topologies)(
    'on %s: a wrong password fails at once, without waiting',
    (name) =>
      // after the outage case: its servers restarted, without the user set below
      inTurn(name, async (topology) => {
        for (const node of topology.dataNodes) {
          const admin = new Redis(node.url);
          await admin.call('ACL', 'SETUSER', 'someone', 'on', '>right', '~*', '&*', '+@all');
          admin.disconnect();
        }
        const logger = recordingLogger();
        const connection = topology.url('someone:wrong@');
        const runner = new TimerRunner({ connection, prefix: 'swt', handlers: {}, logger });
        const dispatcher = new Dispatcher({ connection, prefix: 'swt', logger });
        const timers = new RedisTimers({ connection, prefix: 'swt', logger });
        try {
          for (const begin of [() => runner.start(), () => dispatcher.start(), () => timers.connect()]) {
            const at = Date.now();
            // Redis's own refusal, not a start wait's timeout that names it ('… did not answer …: WRONGPASS')
            await expect(begin()).rejects.toThrow(/^WRONGPASS/);
            expect(Date.now() - at).toBeLessThan(AT_ONCE_MS);
          }
        } finally {
          await timers.dispose();
          await dispatcher.close();
          await runner.close();
        }
      }),
    60_000,
  );
});

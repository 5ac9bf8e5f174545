import { Dispatcher, RedisTimers, TimerRunner } from '@sundial/redis';
import { clusterEnv, ensureBuilt, freePort, spawnRefused, startRedisCluster } from '@sundial/testing/harness';
import { Redis } from 'ioredis';
import { recordingLogger } from '../redis/library-host-fixture';

/** Short: the refused-connection case waits it out; the NOPERM case must fail well before it. */
const WAIT_MS = 1_500;

const hosts = (ports: number[]) => ports.map((port) => `127.0.0.1:${port}`).join(',');

/**
 * What a start on a Redis Cluster says while it cannot start (cluster-causes.ts): the nodes' own error,
 * not ioredis's `Failed to refresh slots cache.`; through Sentinel, the Sentinels' own error after
 * ioredis's `Last error:`, not `Connection is closed.` (ioredis-sentinel-cause.ts); and a ready check refused for want of `cluster|info`
 * fails at once rather than waiting out `startWaitMs` saying `no answer yet`.
 */
/** Starts a Dispatcher on `connection` (nothing listening): its wait line and its timeout match `refused`. */
async function expectRefusedNamed(connection: string, refused: RegExp): Promise<void> {
  const logger = recordingLogger();
  const dispatcher = new Dispatcher({ connection, prefix: 'scause', logger, startWaitMs: WAIT_MS });
  try {
    const error = (await dispatcher.start().catch((thrown: unknown) => thrown)) as Error;
    expect(error.message).toMatch(`Redis did not answer within ${WAIT_MS} ms at start: `);
    expect(error.message).toMatch(refused);
    const waited = logger.lines.filter((line) => line.startsWith(`waiting up to ${WAIT_MS} ms for Redis`));
    expect(waited).toHaveLength(1);
    expect(waited[0]).toMatch(refused);
  } finally {
    await dispatcher.close();
  }
}

/** Ports nothing listens on: every connect to them is refused. */
const refusingPorts = (count: number) => Promise.all(Array.from({ length: count }, () => freePort()));

describe('a start on a Redis Cluster or through Sentinel names why it cannot start', () => {
  it('whose startup nodes refuse connections: the wait line and the timeout name ECONNREFUSED', async () => {
    const ports = await refusingPorts(3);
    // the node's own error, not ioredis's `Failed to refresh slots cache.`
    const refused = new RegExp(`: connect ECONNREFUSED 127\\.0\\.0\\.1:(${ports.join('|')})$`);
    await expectRefusedNamed(`redis+cluster://${hosts(ports)}`, refused);
  }, 20_000);

  it('through Sentinels that refuse connections: the wait line and the timeout name ECONNREFUSED', async () => {
    const ports = await refusingPorts(2);
    // ioredis's own words, its last error now the Sentinel connection's (was `Connection is closed.`)
    const refused = new RegExp(
      `All sentinels are unreachable\\b.* Last error: connect ECONNREFUSED 127\\.0\\.0\\.1:(${ports.join('|')})$`,
    );
    await expectRefusedNamed(`redis+sentinel://${hosts(ports)}/mymaster`, refused);
  }, 20_000);

  it('under an ACL user without cluster|info: every start fails at once naming the NOPERM and the grant', async () => {
    const [cluster] = await Promise.all([startRedisCluster(3), ensureBuilt()]);
    try {
      for (const node of cluster.nodes) {
        const admin = new Redis(node.url);
        await admin.call('ACL', 'SETUSER', 'nocinfo', 'on', '>pw', '~*', '&*', '+@all', '-cluster|info');
        admin.disconnect();
      }
      const connection = `redis+cluster://nocinfo:pw@${hosts(cluster.nodes.map((node) => node.port))}`;
      const logger = recordingLogger();
      // Without the fix each waited out its startWaitMs ("no answer yet"): long enough to tell apart.
      const shared = { connection, prefix: 'scause', logger, startWaitMs: 10_000 };
      const runner = new TimerRunner({ ...shared, handlers: {} });
      const dispatcher = new Dispatcher(shared);
      const timers = new RedisTimers(shared);
      try {
        for (const begin of [() => runner.start(), () => dispatcher.start(), () => timers.connect()]) {
          const at = Date.now();
          const error = (await begin().catch((thrown: unknown) => thrown)) as Error;
          expect(error.message).toMatch(/^NOPERM .*'cluster\|info'/);
          expect(error.message).toContain('+cluster|info on every node');
          expect(error.message).toContain('docs/operations.md "A least-privilege ACL user"');
          expect(Date.now() - at).toBeLessThan(5_000); // deadline: well within startWaitMs
        }
        expect(logger.lines.filter((line) => line.includes('no answer yet'))).toEqual([]);
        // The app's start waits on its own probe connection (RedisPing): it exits at once the same way.
        const at = Date.now();
        const env = clusterEnv(connection, { SUNDIAL_TEST_RECORD_URL: cluster.nodes[0].url });
        const exited = await spawnRefused('scheduler', 'scheduler', env);
        expect(exited).toMatch(/NOPERM .*'cluster\|info'.*\+cluster\|info on every node/);
        expect(Date.now() - at).toBeLessThan(15_000); // deadline: a boot, well within the app's 30 s wait
      } finally {
        await timers.dispose();
        await dispatcher.close();
        await runner.close();
      }
    } finally {
      await cluster.stop();
    }
  }, 60_000);
});

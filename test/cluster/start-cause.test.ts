import { Dispatcher, RedisTimers, TimerRunner } from '@sundial/redis';
import { freePort, startRedisCluster } from '@sundial/testing/harness';
import { Redis } from 'ioredis';
import { recordingLogger } from '../redis/library-host-fixture';

/** Short: the refused-connection case waits it out; the NOPERM case must fail well before it. */
const WAIT_MS = 1_500;

const hosts = (ports: number[]) => ports.map((port) => `127.0.0.1:${port}`).join(',');

/**
 * What a start on a Redis Cluster says while it cannot start (cluster-causes.ts): the nodes' own error,
 * not ioredis's `Failed to refresh slots cache.`; and a ready check refused for want of `cluster|info`
 * fails at once rather than waiting out `startWaitMs` saying `no answer yet`.
 */
describe('a start on a Redis Cluster names why it cannot start', () => {
  it('whose startup nodes refuse connections: the wait line and the timeout name ECONNREFUSED', async () => {
    // never started: every connect is refused
    const ports = [await freePort(), await freePort(), await freePort()];
    const logger = recordingLogger();
    const dispatcher = new Dispatcher({
      connection: `redis+cluster://${hosts(ports)}`,
      prefix: 'scause',
      logger,
      startWaitMs: WAIT_MS,
    });
    const refused = new RegExp(`connect ECONNREFUSED 127\\.0\\.0\\.1:(${ports.join('|')})$`);
    try {
      const error = (await dispatcher.start().catch((thrown: unknown) => thrown)) as Error;
      expect(error.message).toMatch(
        `Redis did not answer within ${WAIT_MS} ms at start: connect ECONNREFUSED`,
      );
      expect(error.message).toMatch(refused);
      const waited = logger.lines.filter((line) => line.startsWith(`waiting up to ${WAIT_MS} ms for Redis`));
      expect(waited).toHaveLength(1);
      expect(waited[0]).toMatch(refused);
    } finally {
      await dispatcher.close();
    }
  }, 20_000);

  it('under an ACL user without cluster|info: every start fails at once naming the NOPERM and the grant', async () => {
    const cluster = await startRedisCluster(3);
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
      } finally {
        await timers.dispose();
        await dispatcher.close();
        await runner.close();
      }
    } finally {
      await cluster.stop();
    }
  }, 30_000);
});

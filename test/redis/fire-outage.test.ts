import { Dispatcher, RedisTimers, TimerRunner } from '@sundial/redis';
import { startRedis } from '../support/redis-server';
import { waitFor } from '../support/wait-for';
import { recorder } from './fire-fixture';

const quiet = { warn: () => undefined, error: () => undefined };
/** A liveness bound, far above grace + the runner's own short timeouts: close() must return at all. */
const CLOSE_DEADLINE_MS = 10_000;

describe('fire path: close during a Redis outage', () => {
  it('returns after the grace even though nothing can be completed or released', async () => {
    const server = await startRedis();
    const shared = { connection: server.url, prefix: 'outage', partitions: 1 };
    const timers = new RedisTimers({ ...shared, logger: quiet });
    const dispatcher = new Dispatcher({ ...shared, logger: quiet });
    const errors: string[] = [];
    const stubborn = recorder(() => new Promise(() => undefined));
    const runner = new TimerRunner({
      ...shared,
      handlers: { stubborn: stubborn.handler },
      logger: { error: (message) => errors.push(message) },
    });
    try {
      await dispatcher.start();
      await runner.start();
      await timers.schedule({ key: 'k', handler: 'stubborn', delay: 0 });
      await waitFor(() => stubborn.calls.length === 1, { what: 'the run to start' });
      await Promise.all([dispatcher.close(), timers.dispose()]);
      await server.stop();

      let deadline: NodeJS.Timeout | undefined;
      const missed = new Promise<never>((_, reject) => {
        deadline = setTimeout(() => reject(new Error('close() did not return')), CLOSE_DEADLINE_MS);
      });
      await Promise.race([runner.close(200), missed]).finally(() => clearTimeout(deadline));

      expect(stubborn.calls[0].signal.aborted).toBe(true);
      expect(errors).toContainEqual(expect.stringMatching(/Redis did not answer/));
    } finally {
      await server.stop();
    }
  }, 20_000);
});

import type { ListResult } from '@sundial/core';
import { faketimeEnv, hasFaketime } from '@sundial/testing/harness';
import type { CliCluster } from '../cli-cluster';

/** Pending timers due 20, 50 and 80 min from the scheduler's now: `+1h` is the first two. */
const DUE_IN_MINUTES = [20, 50, 80];

/**
 * docs/spec.md §5.6: `--due-before +1h` is an hour after the scheduler's now (its `Sundial-Now`, on
 * Redis's clock, which due times are on), not after the CLI host's. The CLI runs under libfaketime, its
 * wall clock half an hour ahead or behind: it listed the timer due in 80 min (ahead), or left out the
 * one due in 50 (behind). On test/cli/cluster-commands.test.ts's cluster, keys `skew:` its own.
 */
export const describeServerNow = (sundial: CliCluster) =>
  (hasFaketime() ? describe : describe.skip)('sundial list --due-before on a host whose clock is off', () => {
    beforeAll(async () => {
      for (const minutes of DUE_IN_MINUTES) {
        const response = await fetch(`${sundial.url()}/v1/timers`, {
          method: 'POST',
          headers: { authorization: `Bearer ${sundial.token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ key: `skew:${minutes}`, handler: 'record', delay: minutes * 60_000 }),
        });
        expect(response.status).toBe(201);
      }
    });

    it.each(['+30m', '-30m'])(
      'with the CLI host %s off: +1h lists the timers due within the hour',
      async (off) => {
        const run = await sundial(
          ['list', '--prefix', 'skew:', '--due-before', '+1h', '--json'],
          faketimeEnv(off),
        );
        expect(run).toMatchObject({ code: 0, stderr: '' });
        const keys = (JSON.parse(run.stdout) as ListResult).items.map((timer) => timer.key);
        expect(keys).toEqual(['skew:20', 'skew:50']);
      },
    );

    it('-30m lists the timers overdue by more than 30 min (none), from the same now', async () => {
      const run = await sundial(
        ['list', '--prefix', 'skew:', '--due-before', '-30m', '--json'],
        faketimeEnv('+1h'),
      );
      expect(run).toMatchObject({ code: 0, stderr: '' });
      expect((JSON.parse(run.stdout) as ListResult).items).toEqual([]);
    });
  });

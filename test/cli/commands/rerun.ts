import type { Timer } from '@sundial/core';
import { waitFor } from '@sundial/testing/harness';
import type { CliCluster } from '../cli-cluster';

/**
 * An operator's commands run twice, as after a lost terminal or a doubtful first try, against a running
 * cluster (private Redis, a scheduler with an API token, a worker): the second says what it did, and
 * the flags a refusal's fix names are the CLI's own. The cases run side by side (`it.concurrent`) on
 * test/cli/cluster-commands.test.ts's cluster, each on keys (`again:`) and a scope (`scope9:`) of its own.
 */
export const describeRerun = (sundial: CliCluster) =>
  describe('sundial CLI: state-changing commands run again', () => {
    const get = async (key: string): Promise<Timer> =>
      JSON.parse((await sundial(['get', key, '--json'])).stdout) as Timer;

    it.concurrent(
      'pause and resume run twice: the second says nothing changed, rather than "paused"/"resumed" again',
      async () => {
        expect(
          (await sundial(['schedule', '--key', 'again:1', '--handler', 'record', '--delay', '1h'])).code,
        ).toBe(0);
        expect(await sundial(['pause', 'again:1'])).toMatchObject({
          code: 0,
          stdout: 'paused again:1: status paused, version 2\n',
        });
        // It printed "paused again:1" again, though the timer was paused already and nothing changed.
        expect(await sundial(['pause', 'again:1'])).toMatchObject({
          code: 0,
          stdout: 'again:1 was already paused: nothing changed: status paused, version 2\n',
        });
        expect((await sundial(['resume', 'again:1'])).stdout).toBe(
          'resumed again:1: status pending, version 3\n',
        );
        expect((await sundial(['resume', 'again:1'])).stdout).toBe(
          'again:1 was not paused: nothing changed: status pending, version 3\n',
        );
        // --json stays the API's answer, the same timer both times
        const [first, second] = [
          await sundial(['pause', 'again:1', '--json']),
          await sundial(['pause', 'again:1', '--json']),
        ];
        expect(JSON.parse(second.stdout)).toEqual(JSON.parse(first.stdout));
        expect((await get('again:1')).version).toBe(4);
      },
    );

    it.concurrent(
      'cancel run twice: the second says when it was cancelled and that nothing changed',
      async () => {
        expect(
          (await sundial(['schedule', '--key', 'again:7', '--handler', 'record', '--delay', '1h'])).code,
        ).toBe(0);
        expect(await sundial(['cancel', 'again:7'])).toMatchObject({
          code: 0,
          stdout: 'cancelled again:7\n',
        });
        const { entries } = JSON.parse((await sundial(['history', 'again:7', '--json'])).stdout) as {
          entries: { at: string; event: string }[];
        };
        expect(entries[0].event).toBe('cancelled');
        const at = new Date(entries[0].at).toISOString();
        // It said "no live timer under key" and exited 1, as for a key never scheduled.
        expect(await sundial(['cancel', 'again:7'])).toMatchObject({
          code: 0,
          stdout: `again:7 was already cancelled at ${at}: nothing changed\n`,
          stderr: '',
        });
        expect(JSON.parse((await sundial(['cancel', 'again:7', '--json'])).stdout)).toEqual({
          key: 'again:7',
          cancelled: false,
          cancelledAt: entries[0].at,
        });
        // a key never scheduled is still refused
        const never = await sundial(['cancel', 'again:never']);
        expect(never.code).toBe(1);
        expect(never.stderr).toMatch(
          /^sundial: not-found \(field key\): no live timer under key "again:never"/,
        );
      },
    );

    it.concurrent('cancel of a timer kept after it ended says its kept row was removed, exit 0', async () => {
      const kept = ['--handler', 'record', '--delay', '50ms', '--remove-on-complete', 'false'];
      const completed = async (key: string) => {
        expect((await sundial(['schedule', '--key', key, ...kept])).code).toBe(0);
        await waitFor(async () => (await sundial.statusOf(key)) === 'completed', {
          what: `${key} completed`,
        });
      };
      await completed('again:kept');
      // It said "no live timer under key" and exited 1, though the cancel had removed the row.
      expect(await sundial(['cancel', 'again:kept'])).toMatchObject({
        code: 0,
        stdout: 'again:kept had ended (completed): its kept row removed\n',
        stderr: '',
      });
      expect((await sundial(['get', 'again:kept'])).code).toBe(1);
      // --json: the API's answer; retried with the same --idempotency-key, the retry says nothing changed
      await completed('again:kept2');
      const args = ['cancel', 'again:kept2', '--idempotency-key', 'ck-1'];
      expect(JSON.parse((await sundial([...args, '--json'])).stdout)).toEqual({
        key: 'again:kept2',
        cancelled: false,
        removed: 'completed',
      });
      expect(await sundial(args)).toMatchObject({
        code: 0,
        stdout:
          'nothing changed: a retry of --idempotency-key ck-1, whose first call removed the kept row of again:kept2 (it had ended completed)\n',
      });
      expect(JSON.parse((await sundial([...args, '--json'])).stdout)).toEqual({
        key: 'again:kept2',
        cancelled: false,
        firstRemoved: 'completed',
      });
    });

    it.concurrent('next of a paused timer says it is paused, not that it will never run again', async () => {
      const cron = ['--handler', 'record', '--cron', '@daily', '--tz', 'Asia/Kolkata'];
      expect((await sundial(['schedule', '--key', 'again:6', ...cron])).code).toBe(0);
      expect((await sundial(['pause', 'again:6'])).code).toBe(0);
      // It printed "again:6 will not run again on its schedule": the API lists none while paused.
      expect(await sundial(['next', 'again:6'])).toMatchObject({
        code: 0,
        stdout: 'again:6 is paused: no due times until sundial resume again:6\n',
      });
      expect(JSON.parse((await sundial(['next', 'again:6', '--json'])).stdout)).toEqual({
        key: 'again:6',
        times: [],
      });
    });

    it.concurrent('a retry with the same --idempotency-key is told apart from the first call', async () => {
      expect(
        (await sundial(['schedule', '--key', 'again:2', '--handler', 'record', '--delay', '1h'])).code,
      ).toBe(0);
      const args = ['pause', 'again:2', '--idempotency-key', 'op-7'];
      expect((await sundial(args)).stdout).toBe('paused again:2: status paused, version 2\n');
      expect((await sundial(args)).stdout).toBe(
        'again:2 was already paused: nothing changed: status paused, version 2\n',
      );
    });

    it.concurrent(
      'cancel retried with the same --idempotency-key: the retry says nothing changed',
      async () => {
        expect(
          (await sundial(['schedule', '--key', 'again:8', '--handler', 'record', '--delay', '1h'])).code,
        ).toBe(0);
        const args = ['cancel', 'again:8', '--idempotency-key', 'c-1'];
        expect(await sundial(args)).toMatchObject({ code: 0, stdout: 'cancelled again:8\n' });
        // It printed "cancelled again:8" again: the API answers a retry as it did the first call.
        const retried = JSON.parse((await sundial([...args, '--json'])).stdout) as { cancelledAt: string };
        expect(retried).toEqual({ key: 'again:8', cancelled: false, cancelledAt: expect.any(String) });
        expect(await sundial(args)).toMatchObject({
          code: 0,
          stdout: `again:8 was already cancelled at ${new Date(retried.cancelledAt).toISOString()}: nothing changed\n`,
        });
      },
    );

    it.concurrent(
      'cancel --prefix retried with the same --idempotency-key: the retry says nothing changed',
      async () => {
        const schedule = (key: string) =>
          sundial(['schedule', '--key', key, '--handler', 'record', '--delay', '1h']);
        for (const key of ['scope9:a', 'scope9:b']) expect((await schedule(key)).code).toBe(0);
        const args = ['cancel', '--prefix', 'scope9:', '--idempotency-key', 'cp-1'];
        expect(await sundial(args)).toMatchObject({
          code: 0,
          stdout: 'cancelled 2 timer(s): the timers of scope9:\n',
        });
        // It printed "cancelled 2 timer(s)" again: the API answers a retry with the first call's count.
        expect(await sundial(args)).toMatchObject({
          code: 0,
          stdout:
            'nothing changed: a retry of --idempotency-key cp-1, whose first call cancelled 2 timer(s): the timers of scope9:\n',
        });
        // A timer of the scope made since is not cancelled by the retry either: it says so, the timer stays.
        expect((await schedule('scope9:c')).code).toBe(0);
        const retried = JSON.parse((await sundial([...args, '--json'])).stdout) as unknown;
        expect(retried).toEqual({ cancelled: 0, firstCancelled: 2 });
        expect((await get('scope9:c')).status).toBe('pending');
        // A new key cancels it.
        expect((await sundial(['cancel', '--prefix', 'scope9:', '--idempotency-key', 'cp-2'])).stdout).toBe(
          'cancelled 1 timer(s): the timers of scope9:\n',
        );
      },
    );

    it.concurrent(
      'schedule run again: --if-exists keep and a retry with the same --idempotency-key say nothing changed',
      async () => {
        const spec = ['schedule', '--key', 'again:5', '--handler', 'record', '--delay', '1h'];
        expect((await sundial([...spec, '--idempotency-key', 's-1'])).stdout).toMatch(
          /^scheduled\nkey: +again:5\n/,
        );
        // Both printed "scheduled", though the timer there was returned as it was.
        for (const rerun of [
          ['--idempotency-key', 's-1'],
          ['--if-exists', 'keep'],
        ]) {
          expect((await sundial([...spec, ...rerun])).stdout).toMatch(
            /^again:5 was already scheduled: nothing changed\nkey: +again:5\n/,
          );
        }
        expect((await get('again:5')).version).toBe(1);
        expect((await sundial([...spec, '--if-exists', 'replace'])).stdout).toMatch(/^scheduled\n/);
      },
    );

    it.concurrent(
      'schedule --if-exists keep on a key cancelled since says nothing was scheduled, not "scheduled"',
      async () => {
        const spec = ['schedule', '--key', 'again:tomb', '--handler', 'record', '--delay', '1h'];
        expect((await sundial(spec)).code).toBe(0);
        expect((await sundial(['cancel', 'again:tomb'])).code).toBe(0);
        // It printed "scheduled" above the cancelled timer the API answered (§3.1: its tombstone).
        const kept = await sundial([...spec, '--if-exists', 'keep']);
        expect(kept).toMatchObject({ code: 0, stderr: '' });
        expect(kept.stdout).toMatch(
          /^again:tomb was cancelled: nothing scheduled \(--if-exists keep answers a cancelled key with its cancelled timer, for 7 days by default\); --if-exists replace schedules it again\nkey: +again:tomb\nstatus: +cancelled\n/,
        );
        expect((await sundial(['get', 'again:tomb'])).code).toBe(1);
        expect((await sundial([...spec, '--if-exists', 'replace'])).stdout).toMatch(/^scheduled\n/);
      },
    );

    it.concurrent(
      'reschedule: --delay or --at, one of them; a paused timer comes back pending at the new due',
      async () => {
        expect(
          (await sundial(['schedule', '--key', 'again:3', '--handler', 'record', '--delay', '1h'])).code,
        ).toBe(0);
        expect((await sundial(['pause', 'again:3'])).code).toBe(0);
        // There was no reschedule command: "unknown command", exit 2.
        const at = await sundial(['reschedule', 'again:3', '--at', '2031-01-02T03:04:05Z']);
        expect(at).toMatchObject({
          code: 0,
          stdout: 'rescheduled again:3: due 2031-01-02T03:04:05.000Z, status pending, version 3\n',
        });
        const inTwoHours = Date.now() + 7_200_000;
        const delayed = JSON.parse(
          (await sundial(['reschedule', 'again:3', '--delay', '2h', '--json'])).stdout,
        ) as Timer;
        expect(delayed).toMatchObject({ key: 'again:3', status: 'pending', version: 4 });
        expect(Math.abs(delayed.dueAt - inTwoHours)).toBeLessThan(60_000); // a margin for node starting the CLI, not a wait

        for (const when of [[], ['--delay', '5m', '--at', '2031-01-02T03:04:05Z']]) {
          const run = await sundial(['reschedule', 'again:3', ...when]);
          expect(run).toMatchObject({ code: 2, stdout: '' });
          expect(run.stderr).toMatch(
            /^sundial: usage: give one of --delay or --at\nfix: Usage: sundial reschedule <key>/,
          );
        }
        const bad = await sundial(['reschedule', 'again:3', '--delay', 'soon']);
        expect(bad.code).toBe(1);
        expect(bad.stderr).toMatch(/^sundial: invalid \(field delay\): /);
        expect((await get('again:3')).version).toBe(4);
      },
    );

    it.concurrent(
      "list, history and next name --limit and --count in a refusal's fix, not the query parameter",
      async () => {
        // The fixes read "Write limit as a whole number from 1 to 1000, e.g. 100." (core's list query, both
        // backends) and "Pass count between 1 and 100, …".
        expect((await sundial(['list', '--limit', '0'])).stderr).toMatch(
          /\nfix: Write --limit as a whole number from 1 to 1000, e\.g\. 100\.\n$/,
        );
        expect(
          (await sundial(['schedule', '--key', 'again:4', '--handler', 'record', '--every', '1h'])).code,
        ).toBe(0);
        expect((await sundial(['history', 'again:4', '--limit', '0'])).stderr).toMatch(
          /\nfix: Pass --limit between 1 and 200, or leave it out for 50\.\n$/,
        );
        expect((await sundial(['next', 'again:4', '--count', '0'])).stderr).toMatch(
          /\nfix: Pass --count between 1 and 100, or leave it out for 10\.\n$/,
        );
      },
    );
  });

import type { Timer } from '@sundial/core';
import { waitFor } from '@sundial/testing/harness';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CliCluster } from '../cli-cluster';

/**
 * Writes retried with the same `--idempotency-key` (test/cli/cluster-commands.test.ts's cluster): the API
 * answers the first call's answer again, marked `Idempotent-Replayed` (docs/spec.md §5.2), and the
 * retry says nothing changed — before, it printed what the first call did, as if done again now
 * ("3 timer(s) scheduled", "triggered k", "rescheduled k: due …"). Keys `replay:` of their own.
 */
export const describeReplayed = (sundial: CliCluster) =>
  describe('sundial CLI: a write retried with the same --idempotency-key', () => {
    it.concurrent('schedule --file batch.json: the retry says it scheduled nothing', async () => {
      const file = join(mkdtempSync(join(tmpdir(), 'sundial-cli-')), 'batch.json');
      const specs = [
        { key: 'replay:b1', handler: 'record', delay: '1h' },
        { key: 'replay:b2', handler: 'record', every: '1h' },
        { key: 'replay:b3', handler: 'record', cron: '0 7 * * *', tz: 'UTC' },
      ];
      writeFileSync(file, JSON.stringify(specs));
      const args = ['schedule', '--file', file, '--idempotency-key', 'rb-1'];
      const first = await sundial(args);
      expect(first).toMatchObject({ code: 0, stderr: '' });
      expect(first.stdout).toMatch(/\nreplay:b3 +pending +cron .*\n3 timer\(s\) scheduled\n$/);
      const retried = await sundial(args);
      expect(retried).toMatchObject({ code: 0, stderr: '' });
      // the same table (the first call's timers), then what the retry did: nothing
      expect(retried.stdout).toBe(
        first.stdout.replace(
          '3 timer(s) scheduled\n',
          'nothing changed: a retry of --idempotency-key rb-1, whose first call scheduled 3 timer(s)\n',
        ),
      );
      // --json: the API's answer, with replayed: true
      const answer = JSON.parse((await sundial([...args, '--json'])).stdout) as { items: Timer[] };
      expect(answer).toEqual({ items: expect.any(Array), replayed: true });
      expect(answer.items.map((timer) => [timer.key, timer.version])).toEqual(
        specs.map((spec) => [spec.key, 1]),
      );
    });

    it.concurrent(
      'schedule and cancel of one key, retried after the key changed hands: the retry says it did nothing',
      async () => {
        const spec = ['schedule', '--key', 'replay:k', '--handler', 'record', '--delay', '1h'];
        expect((await sundial([...spec, '--idempotency-key', 'rk-s'])).stdout).toMatch(/^scheduled\n/);
        expect((await sundial(['cancel', 'replay:k'])).code).toBe(0);
        // It printed "scheduled": the API answered the first call's timer, and the key has none.
        const schedule = await sundial([...spec, '--idempotency-key', 'rk-s']);
        expect(schedule).toMatchObject({ code: 0, stderr: '' });
        expect(schedule.stdout).toMatch(
          /^nothing changed: a retry of --idempotency-key rk-s, whose first call scheduled replay:k; the key holds another timer or none now\nkey: +replay:k\n/,
        );
        expect(await sundial.statusOf('replay:k')).toBeUndefined();

        expect((await sundial([...spec])).code).toBe(0);
        expect((await sundial(['cancel', 'replay:k', '--idempotency-key', 'rk-c'])).stdout).toBe(
          'cancelled replay:k\n',
        );
        expect((await sundial([...spec])).code).toBe(0);
        // It printed "cancelled replay:k": the API answered { cancelled: true }, and the new timer stays.
        expect(await sundial(['cancel', 'replay:k', '--idempotency-key', 'rk-c'])).toMatchObject({
          code: 0,
          stdout:
            'nothing changed: a retry of --idempotency-key rk-c, whose first call cancelled replay:k; the timer scheduled under it since is live, not cancelled\n',
        });
        expect(await sundial.statusOf('replay:k')).toBe('pending');
        const json = await sundial(['cancel', 'replay:k', '--idempotency-key', 'rk-c', '--json']);
        expect(JSON.parse(json.stdout)).toEqual({ key: 'replay:k', cancelled: false, firstCancelled: true });
      },
    );

    it.concurrent(
      'cancel of a kept row retried after the key ended and was kept again: the row stays',
      async () => {
        const kept = [
          '--key',
          'replay:kept',
          '--handler',
          'record',
          '--delay',
          '50ms',
          '--remove-on-complete',
          'false',
        ];
        const completed = async () => {
          expect((await sundial(['schedule', ...kept])).code).toBe(0);
          await waitFor(async () => (await sundial.statusOf('replay:kept')) === 'completed', {
            what: 'replay:kept completed',
          });
        };
        await completed();
        const cancel = ['cancel', 'replay:kept', '--idempotency-key', 'rk-kept'];
        expect((await sundial(cancel)).stdout).toBe(
          'replay:kept had ended (completed): its kept row removed\n',
        );
        await completed();
        // It printed "its kept row removed" again: the API answered the first call's { removed }.
        expect((await sundial(cancel)).stdout).toBe(
          'nothing changed: a retry of --idempotency-key rk-kept, whose first call removed the kept row of replay:kept (it had ended completed)\n',
        );
        expect(await sundial.statusOf('replay:kept')).toBe('completed');
      },
    );

    it.concurrent('trigger, reschedule, pause and backfill: the retry says nothing changed', async () => {
      const schedule = ['schedule', '--handler', 'record', '--idempotency-key'];
      expect((await sundial([...schedule, 'rs-1', '--key', 'replay:e', '--every', '1h'])).code).toBe(0);
      expect((await sundial(['trigger', 'replay:e', '--idempotency-key', 'rt-1'])).stdout).toBe(
        'triggered replay:e: status pending, version 2\n',
      );
      expect((await sundial(['trigger', 'replay:e', '--idempotency-key', 'rt-1'])).stdout).toBe(
        'nothing changed: a retry of --idempotency-key rt-1, whose first call triggered replay:e, answered then: status pending, version 2\n',
      );
      const reschedule = ['reschedule', 'replay:e', '--delay', '2h', '--idempotency-key', 'rr-1'];
      const moved = await sundial(reschedule);
      expect(moved.stdout).toMatch(/^rescheduled replay:e: due \S+, status pending, version \d+\n$/);
      expect((await sundial(reschedule)).stdout).toBe(
        moved.stdout.replace(
          'rescheduled replay:e:',
          'nothing changed: a retry of --idempotency-key rr-1, whose first call rescheduled replay:e, answered then:',
        ),
      );
      // a pause retried after a resume: the retry pauses nothing, and says the state was the first call's
      expect((await sundial(['pause', 'replay:e', '--idempotency-key', 'rp-1'])).code).toBe(0);
      expect((await sundial(['resume', 'replay:e'])).code).toBe(0);
      expect((await sundial(['pause', 'replay:e', '--idempotency-key', 'rp-1'])).stdout).toMatch(
        /^nothing changed: a retry of --idempotency-key rp-1, whose first call paused replay:e, answered then: status paused, version \d+\n$/,
      );
      expect(await sundial.statusOf('replay:e')).toBe('pending');
      const cron = ['--key', 'replay:c', '--cron', '0 0 * * *', '--tz', 'UTC'];
      expect((await sundial([...schedule, 'rs-2', ...cron])).code).toBe(0);
      const range = ['--from', '2026-01-01T00:00:00Z', '--to', '2026-01-02T00:00:00Z'];
      const backfill = ['backfill', 'replay:c', ...range, '--idempotency-key', 'rf-1'];
      expect((await sundial(backfill)).stdout).toBe('backfill of replay:c: 2 slot(s) to run\n');
      expect((await sundial(backfill)).stdout).toBe(
        'nothing changed: a retry of --idempotency-key rf-1, whose first call queued the backfill of replay:c: 2 slot(s) to run\n',
      );
      expect(JSON.parse((await sundial([...backfill, '--json'])).stdout)).toEqual({
        key: 'replay:c',
        slots: 2,
        replayed: true,
      });
    });
  });

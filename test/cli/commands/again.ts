import type { Timer } from '@sundial/core';
import { timerSpecFields, waitFor } from '@sundial/testing/harness';
import type { CliCluster } from '../cli-cluster';

/**
 * The schedules file the shared scheduler follows (test/cli/cluster-commands.test.ts): a one-shot row,
 * which ends at once, kept by the follower (removeOnComplete false).
 */
export const AGAIN_SCHEDULES_FILE = [
  'timers:',
  '  - { key: "file:once", handler: record, delay: 0 }',
  '',
].join('\n');

/**
 * `sundial again <key>` (docs/spec.md §5.6): a kept timer that ended is scheduled again from its row
 * (GET, then POST /v1/timers with what again-spec.ts builds), as the operator UI's Run again and
 * Schedule again do; a live timer, a row the schedules file owns and a key with no row are refused, with
 * nothing sent. On test/cli/cluster-commands.test.ts's private Redis, scheduler (following
 * AGAIN_SCHEDULES_FILE) and worker; the cases run side by side (`it.concurrent`), each on keys of its
 * own (`ag:`, and the file's `file:once`).
 */
export const describeAgain = (sundial: CliCluster) =>
  describe('sundial again', () => {
    const get = async (key: string): Promise<Timer> =>
      JSON.parse((await sundial(['get', key, '--json'])).stdout) as Timer;
    /** The timer under `key` as `sundial get` shows it, once the API says it has `status`. */
    const ended = async (key: string, status = 'completed'): Promise<Timer> => {
      await waitFor(async () => (await sundial.statusOf(key)) === status, { what: `${key} ${status}` });
      return get(key);
    };

    /** POST /v1/timers from here, not the CLI: a spec whose timing the CLI's seconds-long start would spoil. */
    const sendSpec = (spec: object): Promise<Response> =>
      fetch(`${sundial.url()}/v1/timers`, {
        method: 'POST',
        headers: { authorization: `Bearer ${sundial.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(spec),
      });

    /**
     * An interval every 200 ms that ends 2 s after it is sent, kept, sent to the API from here: the CLI's
     * start takes seconds on a loaded host. Sent again with a new end while the API refuses the end, come
     * before the first slot on a starved host. Its endAt.
     */
    const scheduleEnding = async (key: string): Promise<number> => {
      for (let attempt = 1; ; attempt++) {
        const endAt = Date.now() + 2_000; // deadline: the interval runs until then
        const spec = { key, handler: 'record', every: 200, endAt, removeOnComplete: false };
        const sent = await sendSpec(spec);
        if (sent.status === 201) return endAt;
        const refused = (await sent.json()) as { error?: { field?: string } };
        if (attempt === 5 || refused.error?.field !== 'endAt') throw new Error(JSON.stringify(refused));
      }
    };

    it.concurrent('a one-shot kept and completed runs again: a new id, the same fields', async () => {
      const spec = ['--handler', 'record', '--delay', '50ms', '--remove-on-complete', 'false'];
      const fields = ['--payload', '{"n":1}', '--meta', '{"team":"ops"}', '--timeout', '30s'];
      expect((await sundial(['schedule', '--key', 'ag:once', ...spec, ...fields])).code).toBe(0);
      const first = await ended('ag:once');
      const run = await sundial(['again', 'ag:once']);
      // There was no again command: "unknown command", exit 2.
      expect(run).toMatchObject({ code: 0, stderr: '' });
      expect(run.stdout).toMatch(/^scheduled\nkey: +ag:once\nstatus: +(pending|running|completed)\n/);
      const second = await ended('ag:once');
      expect(second.id).not.toBe(first.id);
      expect(second.runCount).toBe(1);
      // due now (delay 0), the rest as the ended row had it
      expect(timerSpecFields(second)).toEqual({ ...timerSpecFields(first), delayMs: 0 });
    });

    it.concurrent(
      'an interval that reached maxRuns is scheduled again with its schedule and policies, maxRuns afresh',
      async () => {
        const spec = ['--handler', 'record', '--every', '200ms', '--max-runs', '2'];
        const policies = [
          '--overlap',
          'allow',
          '--pause-after-failures',
          '3',
          '--remove-on-complete',
          'false',
        ];
        expect((await sundial(['schedule', '--key', 'ag:beat', ...spec, ...policies])).code).toBe(0);
        const first = await ended('ag:beat');
        expect(first.runCount).toBe(2);
        const run = await sundial(['again', 'ag:beat']);
        expect(run.code).toBe(0);
        expect(run.stdout).toMatch(/^scheduled\nkey: +ag:beat\nstatus: +\w+\nschedule: +every 200 ms\n/);
        expect(run.stderr).toBe('ag:beat: its maxRuns (2) counts afresh: up to 2 runs from now.\n');
        const second = await ended('ag:beat');
        expect(second).toMatchObject({
          everyMs: 200,
          maxRuns: 2,
          runCount: 2,
          overlap: 'allow',
          pauseAfterFailures: 3,
        });
        expect(second.id).not.toBe(first.id);
        expect(timerSpecFields(second)).toEqual(timerSpecFields(first));
      },
    );

    it.concurrent('an endAt already past is left out and said so on stderr', async () => {
      const endAt = await scheduleEnding('ag:ends');
      // Completed once no slot is left before its endAt, up to a period (200 ms) before the endAt itself:
      // this case's premise, an endAt past, is waited for too (polled with `sundial get`, a node process
      // a poll, the wait had passed it by chance).
      await waitFor(async () => Date.now() > endAt && (await sundial.statusOf('ag:ends')) === 'completed', {
        timeoutMs: 20_000, // deadline: its endAt comes, 2 s away
        what: 'ag:ends completed, and its endAt past',
      });
      const first = await get('ag:ends');
      expect(first.status).toBe('completed');
      expect(first.endAt).toBe(endAt);
      const run = await sundial(['again', 'ag:ends', '--json']);
      expect(run.code).toBe(0);
      expect(run.stderr).toBe(
        `ag:ends: its endAt, ${new Date(endAt).toISOString()}, has passed: it is left out, so the new timer has no end.\n`,
      );
      const created = JSON.parse(run.stdout) as Timer;
      expect(created).toMatchObject({ key: 'ag:ends', everyMs: 200 });
      expect(created.endAt).toBeUndefined();
      expect((await sundial(['cancel', 'ag:ends'])).code).toBe(0);
    });

    it.concurrent(
      'an endAt ahead but before the first slot (no slot left) is left out: the preview says so',
      async () => {
        // every 2 s, ending 3.9 s after it is sent: the 2 s slot is its last (the next, at 4 s, is past the end),
        // so it completes ~1.9 s before its endAt, and a new timer's first slot (2 s from the again) comes after it
        const endAt = Date.now() + 3_900; // deadline: the window in which the endAt is ahead and no slot reaches it
        const spec = { key: 'ag:window', handler: 'record', every: 2_000, endAt, removeOnComplete: false };
        const sent = await sendSpec(spec);
        expect(sent.status).toBe(201);
        await waitFor(async () => (await sundial.statusOf('ag:window')) === 'completed', {
          timeoutMs: 20_000, // deadline: its one slot comes 2 s after it was sent
          what: 'ag:window completed',
        });
        const run = await sundial(['again', 'ag:window', '--json']);
        const finished = Date.now();
        // Before: the endAt was kept (not yet passed), and the API refused the spec, exit 1.
        expect(run.code).toBe(0);
        const at = new Date(endAt).toISOString();
        // on a host so starved that the again ended past the endAt, the CLI may have read it passed
        const noSlot = "comes before the new timer's first slot (no slot is left before it)";
        const told = (why: string) =>
          `ag:window: its endAt, ${at}, ${why}: it is left out, so the new timer has no end.\n`;
        expect(finished < endAt ? [told(noSlot)] : [told(noSlot), told('has passed')]).toContain(run.stderr);
        expect((JSON.parse(run.stdout) as Timer).endAt).toBeUndefined();
        expect((await sundial(['cancel', 'ag:window'])).code).toBe(0);
      },
    );

    it.concurrent('a live timer is refused, exit 1, nothing sent: trigger or resume runs it', async () => {
      expect(
        (await sundial(['schedule', '--key', 'ag:live', '--handler', 'record', '--delay', '1h'])).code,
      ).toBe(0);
      const pending = await sundial(['again', 'ag:live']);
      expect(pending).toMatchObject({ code: 1, stdout: '' });
      expect(pending.stderr).toBe(
        'sundial: duplicate-key (field key): ag:live is pending: a live timer holds the key, there is nothing to schedule again\n' +
          'fix: Run sundial trigger ag:live to run it now, without moving its schedule. sundial again is for a kept timer that ended (completed or failed).\n',
      );
      expect((await sundial(['pause', 'ag:live'])).code).toBe(0);
      const paused = await sundial(['again', 'ag:live', '--json']);
      expect(paused.code).toBe(1);
      expect(JSON.parse(paused.stderr)).toEqual({
        error: {
          reason: 'duplicate-key',
          field: 'key',
          message: 'ag:live is paused: a live timer holds the key, there is nothing to schedule again',
          fix: 'Run sundial resume ag:live to bring it back, then sundial trigger ag:live to run it now. sundial again is for a kept timer that ended (completed or failed).',
        },
      });
      // with an --idempotency-key it is sent (a retry's first answer would come back), and refused the same
      const keyed = await sundial(['again', 'ag:live', '--idempotency-key', 'ag-live-1']);
      expect(keyed).toMatchObject({ code: 1, stdout: '' });
      expect(keyed.stderr).toMatch(
        /^sundial: duplicate-key \(field key\): ag:live is paused: a live timer holds/,
      );
      expect((await get('ag:live')).version).toBe(2);
    });

    it.concurrent('no timer under the key: not-found, the fix names history and schedule', async () => {
      const run = await sundial(['again', 'ag:gone:1']);
      expect(run).toMatchObject({ code: 1, stdout: '' });
      expect(run.stderr).toBe(
        'sundial: not-found (field key): no timer under key "ag:gone:1" to schedule again [HTTP 404]\n' +
          'fix: Check the key; sundial list --prefix ag:gone: lists the timers under it. A timer removed when it ended ' +
          '(a one-shot after its run, by default) has no row to copy: sundial history ag:gone:1 shows what it ran; ' +
          'schedule it with sundial schedule (--remove-on-complete false keeps it for sundial again).\n',
      );
    });

    it.concurrent('a row the schedules file owns is refused, naming its owner', async () => {
      const before = await ended('file:once');
      const run = await sundial(['again', 'file:once']);
      expect(run).toMatchObject({ code: 1, stdout: '' });
      expect(run.stderr).toBe(
        'sundial: invalid (field meta.sundialOwner): file:once belongs to the schedules file, which writes it again ' +
          'when its row in the file changes (meta.sundialOwner): it is not scheduled again from the command line\n' +
          'fix: Change its row in the schedules file (SUNDIAL_SCHEDULES_FILE): the scheduler writes it again.\n',
      );
      expect((await get('file:once')).id).toBe(before.id);
    });

    it.concurrent(
      "--json prints the API's answer; a retry with the same --idempotency-key is answered as the first call",
      async () => {
        const spec = ['--handler', 'record', '--delay', '50ms', '--remove-on-complete', 'false'];
        expect((await sundial(['schedule', '--key', 'ag:json', ...spec])).code).toBe(0);
        const first = await ended('ag:json');
        const args = ['again', 'ag:json', '--idempotency-key', 'ag-1'];
        const run = await sundial([...args, '--json']);
        expect(run).toMatchObject({ code: 0, stderr: '' });
        const created = JSON.parse(run.stdout) as Timer;
        expect(created).toMatchObject({
          key: 'ag:json',
          handler: 'record',
          removeOnComplete: false,
          version: 1,
        });
        expect(created.id).not.toBe(first.id);
        // the retry meets the timer the first call scheduled (live or ended): the API answers as at first
        const retried = await sundial(args);
        expect(retried).toMatchObject({ code: 0, stderr: '' });
        expect(retried.stdout).toMatch(/^ag:json was already scheduled: nothing changed\nkey: +ag:json\n/);
        expect(retried.stdout).toMatch(new RegExp(`\\nid: +${created.id} \\(version 1\\)\\n`));
        expect((await ended('ag:json')).id).toBe(created.id);
      },
    );
  });

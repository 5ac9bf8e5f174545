import type { ListResult, Preview, Timer } from '@sundial/core';
import { freePort, waitFor } from '@sundial/testing/harness';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CliCluster } from '../cli-cluster';

/**
 * The `sundial` CLI against a running cluster (test/cli/cluster-commands.test.ts's: private Redis, one
 * scheduler with an API token, one worker, as child processes): its answers, its refusals (reason, fix,
 * exit code) and its --json. The cases run side by side (`it.concurrent`), each on keys of its own
 * (`cli:`, and `p` for a preview, which writes nothing).
 */
export const describeAnswers = (sundial: CliCluster) =>
  describe('sundial CLI against a running cluster', () => {
    const json = async <T>(args: string[]): Promise<T> => {
      const run = await sundial([...args, '--json']);
      expect(run).toMatchObject({ code: 0, stderr: '' });
      return JSON.parse(run.stdout) as T;
    };

    it.concurrent('schedules from flags, runs it, and shows it: get, list table, history', async () => {
      const scheduled = await sundial([
        'schedule',
        '--key',
        'cli:every',
        '--handler',
        'record',
        '--every',
        '300ms',
        '--max-runs',
        '2',
        '--remove-on-complete',
        'false',
        '--payload',
        '{"secret":"s3cr3t"}',
      ]);
      expect(scheduled.code).toBe(0);
      expect(scheduled.stdout).toMatch(
        /^scheduled\nkey: +cli:every\nstatus: +pending\nschedule: +every 300 ms/,
      );
      // The payload is not printed unless asked.
      expect(scheduled.stdout).not.toContain('s3cr3t');

      await waitFor(async () => (await sundial.statusOf('cli:every')) === 'completed', {
        timeoutMs: 20_000, // deadline: two runs 300 ms apart, with room on a loaded host
        what: 'cli:every to run twice',
      });
      const done = await json<Timer>(['get', 'cli:every']);
      expect([done.status, done.runCount]).toEqual(['completed', 2]);
      expect((await sundial(['get', 'cli:every', '--show-payload'])).stdout).toContain('{"secret":"s3cr3t"}');

      const history = await sundial(['history', 'cli:every']);
      expect(history.code).toBe(0);
      expect(history.stdout.split('\n')[0]).toMatch(/^AT +EVENT +VERSION +WORKER +DETAIL$/);
      expect(history.stdout).toMatch(/completed/);
      expect(history.stdout).toMatch(/scheduled/);

      const list = await sundial(['list', '--prefix', 'cli:every']);
      expect(list.stdout).toMatch(
        /^KEY +STATUS +SCHEDULE +HANDLER +DUE +RUNS +LAST\ncli:every +\S+ +every 300 ms +record /,
      );
      // how many it listed, under the table (it gave no count)
      expect(list.stdout).toMatch(/\n1 timer\(s\)\n$/);
    });

    it.concurrent(
      "history of a cron whose failed run ended it: the failure's reason and why it ended",
      async () => {
        const key = 'cli:ends';
        const spec = ['--handler', 'no-such-handler', '--cron', '* * * * * *', '--tz', 'UTC'];
        // its runs fail (no worker has the handler); the one with no slot left before the endAt ends it.
        // 10 s ahead: a CLI starting on a loaded host took over a second (4 s ahead was refused once in a
        // clean-clone CI run at load ~8: its first slot after the endAt), and an endAt already past is refused.
        const endAt = String(Date.now() + 10_000);
        const scheduled = await sundial([
          'schedule',
          '--key',
          key,
          ...spec,
          '--end-at',
          endAt,
          '--remove-on-complete',
          'false',
        ]);
        expect(scheduled.code === 0 ? '' : scheduled.stderr).toBe('');
        await waitFor(async () => (await sundial.statusOf(key)) === 'failed', {
          timeoutMs: 30_000, // deadline: its endAt, 10 s, then a second or two
          what: `${key} to end`,
        });
        const history = (await sundial(['history', key])).stdout.split('\n');
        const [last, ...earlier] = history.filter((line) => /^\S+ +failed /.test(line));
        expect(last).toMatch(/ reason=unknown-handler ended=ended attempt=1 due=\S+ /);
        for (const line of earlier) expect(line).not.toContain('ended=');
      },
    );

    it.concurrent(
      'pauses, resumes, shows next times, triggers and cancels, each answered with the new state',
      async () => {
        expect(
          (await sundial(['schedule', '--key', 'cli:once', '--handler', 'record', '--delay', '1h'])).code,
        ).toBe(0);
        expect(await sundial(['pause', 'cli:once'])).toMatchObject({
          code: 0,
          stdout: expect.stringMatching(/^paused cli:once: status paused/),
        });
        expect((await json<Timer>(['get', 'cli:once'])).status).toBe('paused');
        expect((await sundial(['resume', 'cli:once'])).stdout).toMatch(/^resumed cli:once: status pending/);
        const next = await sundial(['next', 'cli:once']);
        expect(next.stdout).toMatch(/^# +AT +OFFSET +LOCAL\n1 +\d{4}-\d\d-\d\dT/);
        expect((await sundial(['trigger', 'cli:once'])).stdout).toMatch(/^triggered cli:once/);
        expect(await sundial(['cancel', 'cli:once'])).toMatchObject({
          code: 0,
          stdout: 'cancelled cli:once\n',
        });
      },
    );

    it.concurrent(
      "a running timer says since when; a cron's next times show its zone's wall time",
      async () => {
        // the gated run goes on until the worker stops (its payload's release key is never set)
        const args = ['--handler', 'gated', '--delay', '50ms', '--payload', '{"release":"cli:never"}'];
        expect((await sundial(['schedule', '--key', 'cli:running', ...args])).code).toBe(0);
        await waitFor(async () => (await sundial.statusOf('cli:running')) === 'running', {
          what: 'cli:running to run',
        });
        const running = await json<Timer>(['get', 'cli:running']);
        expect(running.status).toBe('running');
        // It printed "last run: running", without when the run started.
        expect((await sundial(['get', 'cli:running'])).stdout).toMatch(
          new RegExp(`^last run: +running, started ${new Date(running.last!.started).toISOString()}$`, 'm'),
        );

        const cron = ['--handler', 'record', '--cron', '0 9 * * 1-5', '--tz', 'America/Toronto'];
        expect((await sundial(['schedule', '--key', 'cli:cron', ...cron])).code).toBe(0);
        // The table had the instant in UTC (14:00Z) beside -05:00, which reads as 14:00 in Toronto.
        expect((await sundial(['next', 'cli:cron', '--count', '1'])).stdout).toMatch(
          /^# +AT +OFFSET +LOCAL\n1 +\d{4}-\d\d-\d\dT1[34]:00:00\.000Z +-0[45]:00 +\d{4}-\d\d-\d\dT09:00:00\.000-0[45]:00\n$/,
        );
      },
    );

    it.concurrent('schedules from --file, flags overriding the file', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'sundial-cli-'));
      const file = join(dir, 'spec.json');
      writeFileSync(
        file,
        JSON.stringify({ key: 'cli:file', handler: 'record', cron: '0 7 * * 1-5', tz: 'America/Toronto' }),
      );
      const timer = await json<Timer>(['schedule', '--file', file, '--handler', 'log']);
      expect(timer).toMatchObject({
        key: 'cli:file',
        handler: 'log',
        kind: 'cron',
        cron: '0 7 * * 1-5',
        tz: 'America/Toronto',
      });
    });

    it.concurrent('schedules a batch from a --file array, all or none, flags set on each spec', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'sundial-cli-'));
      const file = join(dir, 'batch.json');
      const specs = [
        { key: 'cli:batch:1', handler: 'record', delay: '1h' },
        { key: 'cli:batch:2', handler: 'record', every: '2h' },
      ];
      writeFileSync(file, JSON.stringify(specs));
      const batch = await sundial(['schedule', '--file', file, '--handler', 'log']);
      expect(batch).toMatchObject({ code: 0, stderr: '' });
      expect(batch.stdout).toMatch(
        /^KEY +STATUS +SCHEDULE +HANDLER +DUE +RUNS +LAST\ncli:batch:1 +pending +once +log +/,
      );
      expect(batch.stdout).toMatch(/\ncli:batch:2 +pending +every 2 h +log +.*\n2 timer\(s\) scheduled\n$/);
      writeFileSync(
        file,
        JSON.stringify([
          { ...specs[0], key: 'cli:batch:3' },
          { ...specs[1], delay: '1h' },
        ]),
      );
      const refused = await sundial(['schedule', '--file', file]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/^sundial: invalid \(field specs\[1\]\.(every|delay)\): specs\[1\]: /);
      expect((await sundial(['get', 'cli:batch:3'])).code).toBe(1);
    });

    it.concurrent(
      'trigger of an ended timer: the refusal says it ended (completed) and how to run it again',
      async () => {
        // The fix said the list "lists the live timers", but a timer kept by removeOnComplete false is listed
        // after it ended, and trigger refuses it all the same; then it said "no live timer", as for no row:
        // the refusal names the status it ended with (docs/spec.md §2) and `sundial again`.
        const args = ['--handler', 'record', '--delay', '50ms', '--remove-on-complete', 'false'];
        expect((await sundial(['schedule', '--key', 'cli:ended:1', ...args])).code).toBe(0);
        await waitFor(async () => (await sundial.statusOf('cli:ended:1')) === 'completed', {
          what: 'cli:ended:1 completed',
        });
        const listed = await json<ListResult>(['list', '--prefix', 'cli:ended:']);
        expect(listed.items.map((timer) => [timer.key, timer.status])).toEqual([
          ['cli:ended:1', 'completed'],
        ]);
        const refused = await sundial(['trigger', 'cli:ended:1']);
        expect(refused.code).toBe(1);
        expect(refused.stderr).toBe(
          'sundial: not-found (field key): Cannot trigger timer "cli:ended:1": it has ended (completed); its row is kept, but no live timer is there to trigger. [HTTP 404]\n' +
            'fix: Schedule it again to run it: sundial again cli:ended:1. A new timer under the key replaces the row it ended with; sundial history cli:ended:1 shows its runs.\n',
        );
      },
    );

    it.concurrent(
      'prints the refusal with its reason, field and fix, and exits 1; nothing is written',
      async () => {
        const refused = await sundial([
          'schedule',
          '--key',
          'cli:bad',
          '--handler',
          'record',
          '--every',
          '10ms',
        ]);
        expect(refused.code).toBe(1);
        expect(refused.stdout).toBe('');
        expect(refused.stderr).toMatch(
          /^sundial: invalid \(field every\): .*minimum interval.* \[HTTP 400\]\nfix: .+/,
        );
        expect((await sundial(['get', 'cli:bad'])).stderr).toMatch(
          /^sundial: not-found \(field key\): no live timer under key "cli:bad" \[HTTP 404\]\nfix: Check the key; sundial list --prefix cli: lists the timers under it\. One listed as completed or failed has ended \(kept by --remove-on-complete false\): sundial again cli:bad, or schedule it again to run it\. One removed when it ended \(a one-shot after its run, by default\) keeps its history for 7 days: sundial history cli:bad\.\n$/,
        );

        const jsonRefusal = await sundial(['pause', 'cli:missing', '--json']);
        expect(jsonRefusal.code).toBe(1);
        expect(JSON.parse(jsonRefusal.stderr)).toEqual({
          error: {
            reason: 'not-found',
            field: 'key',
            message: expect.any(String),
            fix: expect.any(String),
            status: 404,
          },
        });
      },
    );

    it.concurrent('without the API token: unauthorized, with the fix, exit 1', async () => {
      const run = await sundial(['list'], { SUNDIAL_TOKEN: '' });
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(
        /^sundial: unauthorized \(field authorization\): missing Authorization header \[HTTP 401\]\nfix: Set SUNDIAL_TOKEN to the scheduler's SUNDIAL_API_TOKEN/,
      );
    });

    it.concurrent(
      'a bad command line exits 2 with the usage; an unreachable scheduler exits 3 with what to do',
      async () => {
        const unknown = await sundial(['frobnicate']);
        expect(unknown).toMatchObject({ code: 2, stdout: '' });
        expect(unknown.stderr).toMatch(
          /^sundial: usage: unknown command "frobnicate"\nfix: Run sundial help; commands: list, get/,
        );
        expect((await sundial(['pause'])).stderr).toMatch(
          /a timer key is required\nfix: Usage: sundial pause <key>/,
        );
        expect((await sundial(['list', '--prefx', 'a'])).code).toBe(2);

        const port = await freePort();
        const away = await sundial(['list'], { SUNDIAL_URL: `http://127.0.0.1:${port}` });
        expect(away.code).toBe(3);
        expect(away.stderr).toMatch(
          /^sundial: unavailable: cannot reach the scheduler at http:\/\/127\.0\.0\.1:\d+ .*\nfix: Start the scheduler/,
        );
      },
    );

    it.concurrent(
      '--json answers parse as the API shapes: list (every page with --all, by due with --due-before), preview',
      async () => {
        for (let n = 0; n < 5; n++) {
          await json<Timer>([
            'schedule',
            '--key',
            `cli:page:${n}`,
            '--handler',
            'record',
            '--delay',
            `${50 - n}m`,
          ]);
        }
        const page = await json<ListResult>(['list', '--prefix', 'cli:page:', '--limit', '2']);
        expect(page.items).toHaveLength(2);
        expect(page.nextCursor).toEqual(expect.any(String));
        expect((await sundial(['list', '--prefix', 'cli:page:', '--limit', '2'])).stdout).toMatch(
          /\n2 timer\(s\) on this page\nmore: sundial list --prefix cli:page: --limit 2 --cursor \S+\n$/,
        );
        const all = await json<ListResult>(['list', '--prefix', 'cli:page:', '--limit', '2', '--all']);
        // every page, in key order across the scheduler's partitions
        expect(all.items.map((t) => t.key)).toEqual([0, 1, 2, 3, 4].map((n) => `cli:page:${n}`));
        const due = await json<ListResult>(['list', '--prefix', 'cli:page:', '--due-before', '+1h']);
        expect(due.items.map((t) => t.key)).toEqual([4, 3, 2, 1, 0].map((n) => `cli:page:${n}`));

        const preview = await json<Preview>([
          'preview',
          '--key',
          'p',
          '--handler',
          'log',
          '--cron',
          '0 9 * * *',
          '--tz',
          'Europe/Paris',
          '--count',
          '3',
        ]);
        expect(preview.spec).toMatchObject({ key: 'p', kind: 'cron', cron: '0 9 * * *' });
        expect(preview.next).toHaveLength(3);
        expect(preview.next[0]).toEqual({
          at: expect.stringMatching(/T\d\d:00:00/),
          offset: expect.stringMatching(/^\+0[12]:00$/),
        });
        expect((await json<ListResult>(['list', '--prefix', 'p'])).items).toEqual([]);
      },
    );
  });

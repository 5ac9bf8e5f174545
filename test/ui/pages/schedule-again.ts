import type { Timer } from '@sundial/core';
import { keyPath, timerSpecFields, waitFor } from '@sundial/testing/harness';
import { type ChromiumCluster, type ClusterPage, usePage } from '../chromium-fixture';

/**
 * The schedules file the scheduler of `shared` follows (test/ui/cluster-pages.test.ts): two rows that end
 * at once, which the follower keeps (removeOnComplete false).
 */
export const SCHEDULE_AGAIN_FILE = [
  'timers:',
  '  - { key: "file:tick", handler: record, cron: "* * * * * *", tz: UTC, maxRuns: 1 }',
  '  - { key: "file:once", handler: record, delay: 0 }',
  '',
].join('\n');

/**
 * Schedule again on a kept interval or cron that ended (docs/spec.md §5.6): the operator UI recreates it
 * from its row through `POST /v1/timers`; a row a declarative source owns shows its owner instead. On
 * `shared`, whose scheduler follows SCHEDULE_AGAIN_FILE; one page of its own.
 */
export function describeScheduleAgain(shared: ChromiumCluster): void {
  describe('operator UI: Schedule again, in chromium', () => {
    const cluster = usePage(shared);
    let page: ClusterPage['page'];
    let api: ClusterPage['api'];
    beforeAll(() => ({ page, api } = cluster));

    const notice = () => page.locator('#notice');
    // each locator's waitFor below is a deadline (the page's 10 s default), left as soon as it shows
    const timerPage = (key: string, status: string) => cluster.openTimer(key, status);
    const get = async (key: string) => (await api<Timer>('GET', keyPath(key))).body;
    /** deadline (waitFor's 10 s): left as soon as the timer has ended */
    const ended = (key: string) =>
      waitFor(async () => ['completed', 'failed'].includes((await get(key)).status) && get(key), {
        what: `${key} to end`,
      });
    /** Presses `name` and accepts its question: the question asked. */
    const pressAndAccept = async (name: string): Promise<string> => {
      const asked = new Promise<string>((resolve) =>
        page.once('dialog', (dialog) => {
          resolve(dialog.message());
          void dialog.accept();
        }),
      );
      await page.getByRole('button', { name }).click();
      return asked;
    };

    it('an interval that reached maxRuns: Schedule again recreates it with every policy of its row', async () => {
      const key = 'again:every';
      const now = Date.now();
      await api('POST', '/v1/timers', {
        key,
        handler: 'record',
        payload: { invoice: 42 },
        meta: { team: 'billing' },
        every: '1s',
        maxRuns: 2,
        removeOnComplete: false,
        overlap: 'buffer-one',
        retry: { attempts: 2, backoff: { type: 'fixed', delay: '10ms' } },
        timeout: '30s',
        delivery: 'at-most-once',
        catchup: 'skip',
        catchupWindow: '1m',
        jitter: '50ms',
        startAt: now - 3_600_000,
        endAt: now + 3_600_000,
      });
      // a live timer has neither button (Trigger is its way)
      await api('POST', '/v1/timers', { key: 'again:live', handler: 'record', cron: '0 0 1 1 *', tz: 'UTC' });
      await timerPage('again:live', 'pending');
      for (const name of ['Schedule again', 'Run again']) {
        expect(await page.getByRole('button', { name }).count()).toBe(0);
      }

      const before = await ended(key);
      expect(before).toMatchObject({ status: 'completed', runCount: 2 });
      await timerPage(key, 'completed');
      expect(await page.getByRole('button', { name: 'Run again' }).count()).toBe(0);
      expect(await pressAndAccept('Schedule again')).toBe(
        `Schedule “${key}” again, every 1 s? It is scheduled anew under its key from now on, with its handler, payload and options. ` +
          'Its maxRuns (2) counts afresh: up to 2 runs from now.',
      );
      await notice().locator(`text=${key}: scheduled again, every 1 s, next due`).waitFor();
      const after = await get(key);
      expect(after.id).not.toBe(before.id);
      expect(after.runCount).toBeLessThan(2);
      expect(timerSpecFields(after)).toEqual(timerSpecFields(before));
      expect(await notice().textContent()).toContain(`(id ${after.id})`);
    });

    it('a cron that failed past its endAt: the question says the endAt is left out, and it is', async () => {
      const key = 'again:cron';
      const endAt = Date.now() + 3_000; // after the first slot; room for a call landing late on a loaded host
      await api('POST', '/v1/timers', {
        key,
        handler: 'no-such-handler',
        meta: { team: 'reports' },
        cron: '* * * * * *',
        tz: 'Europe/Paris',
        endAt,
        removeOnComplete: false,
        pauseAfterFailures: 5,
      });
      // its runs (the one or two slots up to the endAt) fail (no such handler); the last, with no slot left
      // before the endAt, ends it `failed` (a failed run alone would not: a cron goes on to its next slot,
      // test/conformance/unknown-handler.test.ts)
      const before = await ended(key);
      expect(before).toMatchObject({ status: 'failed', last: { status: 'failed' }, endAt });
      // deadline (waitFor's 10 s): left as soon as the endAt has passed, three seconds at most
      await waitFor(() => Date.now() > endAt, { what: 'the endAt to pass' });
      await timerPage(key, 'failed');
      // its Ledger: the last run's entry says its failure and that the endAt ended the timer; none before it
      const ledger = page.locator('table', { has: page.locator('caption', { hasText: 'newest first' }) });
      const failed = ledger.locator('tbody tr', { has: page.locator('td:text-is("failed")') });
      await failed
        .first()
        .locator('td', { hasText: /^reason unknown-handler · ended ended · / })
        .waitFor();
      const details = await failed.locator('td:nth-child(5)').allTextContents();
      expect(details.slice(1).filter((detail) => detail.includes(' · ended '))).toEqual([]);
      expect(await pressAndAccept('Schedule again')).toMatch(
        new RegExp(
          `^Schedule “${key}” again, cron \\* \\* \\* \\* \\* \\* \\(Europe/Paris\\)\\? It is scheduled anew under its key from now on, with its handler, payload and options\\. ` +
            'Its endAt, \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d, has passed: it is left out, so the new timer has no end\\.$',
        ),
      );
      await notice()
        .locator(`text=${key}: scheduled again, cron * * * * * * (Europe/Paris), next due`)
        .waitFor();
      const after = await get(key);
      expect(after.id).not.toBe(before.id);
      expect(after.endAt).toBeUndefined();
      expect(timerSpecFields(after)).toEqual({ ...timerSpecFields(before), endAt: undefined });
      await api('DELETE', keyPath(key)); // it fails every second from now on
    });

    it('an endAt ahead that no slot reaches: the preview says so, the question too, and it is left out', async () => {
      const key = 'again:window';
      // every 2 s, ending 3.9 s after it is sent: the 2 s slot is its last, so it completes ~1.9 s before its
      // endAt, and a new timer's first slot (2 s after the press) comes after it. Before, the endAt was kept
      // (not passed) and the API refused the spec: an end before the first slot.
      const endAt = Date.now() + 3_900; // deadline: the window in which the endAt is ahead and no slot reaches it
      await api('POST', '/v1/timers', {
        key,
        handler: 'record',
        every: 2_000,
        endAt,
        removeOnComplete: false,
      });
      const before = await ended(key);
      expect(before).toMatchObject({ status: 'completed', endAt });
      await timerPage(key, 'completed');
      const asked = await pressAndAccept('Schedule again');
      const pressed = Date.now();
      // on a host so starved that the press ended past the endAt, the page may have read it passed
      const noSlot = "comes before the new timer's first slot \\(no slot is left before it\\)";
      const why = pressed < endAt ? noSlot : `(${noSlot}|has passed)`;
      expect(asked).toMatch(
        new RegExp(` Its endAt, [^,]+, ${why}: it is left out, so the new timer has no end\\.$`),
      );
      await notice().locator(`text=${key}: scheduled again`).waitFor();
      const after = await get(key);
      expect([after.id === before.id, after.endAt]).toEqual([false, undefined]);
      await api('DELETE', keyPath(key));
    });

    it('a timer scheduled under the key since: Schedule again is refused in the page’s terms', async () => {
      const key = 'again:every';
      await timerPage(key, (await ended(key)).status);
      const live = (await api<Timer>('POST', '/v1/timers', { key, handler: 'record', delay: '2h' })).body;
      await pressAndAccept('Schedule again');
      await notice().locator('text=duplicate-key:').waitFor();
      expect(await notice().textContent()).toMatch(
        /Fix: A live timer now holds this key: press Refresh to see it, and cancel it first to run or schedule the ended one again\.$/,
      );
      expect(await get(key)).toMatchObject({ id: live.id, kind: 'once', status: 'pending' });
    });

    it('rows the schedules file owns have neither button: a note names their owner', async () => {
      await ended('file:tick');
      await ended('file:once');
      const note = (action: string) =>
        `No ${action} here: this timer belongs to the schedules file, which writes it again when its row in the file changes (meta.sundialOwner).`;
      for (const [key, action] of [
        ['file:tick', 'Schedule again'],
        ['file:once', 'Run again'],
      ]) {
        await timerPage(key, 'completed');
        await page.getByText(note(action)).waitFor();
        for (const name of ['Schedule again', 'Run again']) {
          expect(await page.getByRole('button', { name }).count()).toBe(0);
        }
      }
    });
  });
}

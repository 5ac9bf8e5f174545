import type { Timer } from '@sundial/core';
import { keyPath, waitFor } from '@sundial/testing/harness';
import { type ChromiumCluster, type ClusterPage, usePage } from '../chromium-fixture';

/**
 * The operator UI as a support engineer uses it on a "my reminder didn't fire" ticket: from one timer's
 * page to the next, on a phone, re-running a failed one-shot, clearing a scope. On `shared`
 * (test/ui/cluster-pages.test.ts: a scheduler without a token, a worker with the test handlers), one page
 * of its own, in order.
 */
export function describeSupportWalk(shared: ChromiumCluster): void {
  describe('operator UI: a support walk in chromium', () => {
    const cluster = usePage(shared);
    let page: ClusterPage['page'];
    let api: ClusterPage['api'];
    let ui: string;
    beforeAll(() => ({ page, api, ui } = cluster));

    const notice = () => page.locator('#notice');
    // each locator's waitFor below is a deadline (the page's 10 s default), left as soon as it shows
    const timerPage = (key: string, status: string) => cluster.openTimer(key, status);
    /** a one-shot that ran once and failed (no such handler), kept by removeOnComplete false */
    const failedOnce = async (key: string, extra: Record<string, unknown> = {}) => {
      await api('POST', '/v1/timers', {
        key,
        handler: 'no-such-handler',
        delay: 0,
        removeOnComplete: false,
        ...extra,
      });
      // deadline (waitFor's 10 s): left as soon as the run has failed
      await waitFor(async () => (await api<Timer>('GET', keyPath(key))).body.status === 'failed', {
        what: `${key} to fail`,
      });
    };

    it("a refusal on one timer's page is gone on the next timer's page, which loaded fine", async () => {
      await api('POST', '/v1/timers', { key: 'walk:fine', handler: 'record', delay: '1h' });
      await page.goto(`${ui}#/timer/${encodeURIComponent('walk:gone')}`);
      await notice().locator('text=not-found:').waitFor();
      await timerPage('walk:fine', 'pending');
      // before, the red not-found of walk:gone stayed above walk:fine as if it were this timer's
      expect(await notice().textContent()).toBe('');
      // an action's own notice stays on the page it was done on, and Cancel's on the list it goes to
      await page.getByRole('button', { name: 'Pause' }).click();
      await notice().locator('text=walk:fine: paused.').waitFor();
      page.once('dialog', (dialog) => void dialog.accept());
      await page.getByRole('button', { name: 'Cancel timer' }).click();
      await page.waitForURL(/\/ui\/#\/$/);
      // The list, empty or not (the other page suites' timers share this cluster), once loaded; a failure
      // says what the page showed instead (one failed once in a clean-clone CI, not reproduced).
      const list = page.getByRole('table', { name: /^Timers \d+–\d+, by key$/ });
      await page
        .locator('text=No timers match.')
        .or(list)
        .waitFor()
        .catch(async (error: Error) => {
          throw new Error(`${error.message}\nthe page: ${await page.locator('body').innerText()}`);
        });
      expect(await list.getByRole('link', { name: 'walk:fine', exact: true }).count()).toBe(0);
      expect(await notice().textContent()).toBe('walk:fine: cancelled.');
      expect((await api('GET', keyPath('walk:fine'))).status).toBe(404);
    });

    it('a timer link cut short (not percent-encoding) says so, instead of leaving the last page on screen', async () => {
      const errors: string[] = [];
      page.on('pageerror', (error) => errors.push(error.message));
      await page.goto(`${ui}#/?prefix=walk:`);
      await page.getByRole('heading', { level: 1, name: 'Timers' }).waitFor();
      await page.goto(`${ui}#/timer/walk%3Afine%E0%A4%A`);
      await page.getByRole('heading', { level: 1, name: 'Not a timer link' }).waitFor();
      expect(await notice().textContent()).toBe(
        'invalid: the link\'s key "walk%3Afine%E0%A4%A" is not percent-encoding, so it names no timer. Fix: Open the timer from the Timers list, or copy its link again whole.',
      );
      expect(errors).toEqual([]);
    });

    it('a timer link to . or .. says no route can name it (it showed the 404 of the route above)', async () => {
      const errors: string[] = [];
      page.on('pageerror', (error) => errors.push(error.message));
      // the page asked GET /v1/ (the URL resolves the segment) and showed that route's 404
      for (const key of ['.', '..']) {
        await page.goto(`${ui}#/?prefix=walk:`);
        await page.getByRole('heading', { level: 1, name: 'Timers' }).waitFor();
        await page.goto(`${ui}#/timer/${key}`);
        await page.getByRole('heading', { level: 1, name: 'Not a timer link' }).waitFor();
        expect(await notice().textContent()).toMatch(
          new RegExp(
            `^invalid: the key "${key.replace(/\./g, '\\.')}" is a URL dot-segment: no API route can name it`,
          ),
        );
      }
      expect(errors).toEqual([]);
    });

    it('a timer page on a refusal has Refresh, which loads the timer once there is one; one row is said in the singular', async () => {
      const key = 'walk:later';
      await page.goto(`${ui}#/timer/${encodeURIComponent(key)}`);
      await notice().locator('text=not-found:').waitFor();
      // Before: no Refresh on this page, though the `unavailable` fix in it says to retry.
      await api('POST', '/v1/timers', { key, handler: 'record', delay: '1h' });
      await page.getByRole('button', { name: 'Refresh' }).click();
      await page.getByRole('heading', { level: 1, name: `${key} pending` }).waitFor();
      // a one-shot just scheduled: one due time, one ledger entry (before: "The next 1 due times")
      for (const caption of ['The next due time', 'The only entry']) {
        await page.locator('caption', { hasText: caption }).waitFor();
      }
      const captions = await page.locator('caption').allTextContents();
      expect(captions).toEqual(['The next due time', 'Counters of this timer', 'The only entry']);
    });

    it('Reschedule moves the due time through the API; a bad time is refused with its fix, nothing moved', async () => {
      const key = 'walk:move';
      const created = (await api<Timer>('POST', '/v1/timers', { key, handler: 'record', delay: '1h' })).body;
      await timerPage(key, 'pending');
      const due = page.getByLabel('New due time (a delay from now, or an instant)');
      await due.fill('soon');
      await page.getByRole('button', { name: 'Reschedule' }).click();
      await notice().locator('text=invalid: delay "soon" is not a duration').waitFor();
      // the fix in the page's terms: its New due time field, not the API's delay (ui-fix.ts)
      expect(await notice().textContent()).toContain('Fix: Enter in New due time a non-negative number');
      expect((await api<Timer>('GET', keyPath(key))).body).toMatchObject({
        version: created.version,
        dueAt: created.dueAt,
      });

      const at = new Date(Date.now() + 30 * 60_000).toISOString(); // half an hour before its due
      await due.fill(at);
      await page.getByRole('button', { name: 'Reschedule' }).click();
      await notice().locator(`text=${key}: rescheduled, due`).waitFor();
      const moved = (await api<Timer>('GET', keyPath(key))).body;
      expect(moved.version).toBeGreaterThan(created.version);
      expect(moved.dueAt).toBe(Date.parse(at));
    });

    it('a failed one-shot kept: Run again schedules it anew with its own options, through the API', async () => {
      const key = 'walk:failed:1';
      const options = { payload: { invoice: 42 }, meta: { team: 'billing' }, timeout: 60_000 };
      await failedOnce(key, options);
      const before = (await api<Timer>('GET', keyPath(key))).body;
      // a live timer has no Run again (Trigger is its way); a pending one-shot neither
      await api('POST', '/v1/timers', { key: 'walk:pending', handler: 'record', delay: '1h' });
      await timerPage('walk:pending', 'pending');
      expect(await page.getByRole('button', { name: 'Run again' }).count()).toBe(0);

      await timerPage(key, 'failed');
      const dialogs: string[] = [];
      page.once('dialog', (dialog) => {
        dialogs.push(dialog.message());
        void dialog.accept();
      });
      await page.getByRole('button', { name: 'Run again' }).click();
      await notice().locator(`text=${key}: scheduled again, due now`).waitFor();
      expect(dialogs).toEqual([expect.stringContaining(`Run “${key}” again now?`)]);
      // a new timer under the key, with the old one's handler, payload, meta, timeout and keep: it ran
      // deadline (waitFor's 10 s): left as soon as the new timer has run
      await waitFor(
        async () => {
          const now = (await api<Timer>('GET', keyPath(key))).body;
          return now.id !== before.id && now.status === 'failed';
        },
        { what: `${key} to run again` },
      );
      const after = (await api<Timer>('GET', keyPath(key))).body;
      expect(after).toMatchObject({
        handler: before.handler,
        payload: { invoice: 42 },
        meta: { team: 'billing' },
      });
      expect(after).toMatchObject({ timeout: 60_000, removeOnComplete: false, runCount: 1 });
      expect(await notice().textContent()).toContain(`(id ${after.id})`);
    });

    it('Run again that meets a timer scheduled under the key since: refused, in the page’s terms, nothing replaced', async () => {
      const key = 'walk:failed:2';
      await failedOnce(key);
      await timerPage(key, 'failed');
      const live = (await api<Timer>('POST', '/v1/timers', { key, handler: 'record', delay: '2h' })).body;
      page.once('dialog', (dialog) => void dialog.accept());
      await page.getByRole('button', { name: 'Run again' }).click();
      await notice().locator('text=duplicate-key:').waitFor();
      expect(await notice().textContent()).toMatch(
        /Fix: A live timer now holds this key: press Refresh to see it/,
      );
      const still = (await api<Timer>('GET', keyPath(key))).body;
      expect(still).toMatchObject({ id: live.id, status: 'pending', version: live.version });
    });

    it('Cancel by prefix names the ended timers kept under it, which the API deletes with the live ones', async () => {
      await failedOnce('walk:scope:failed');
      await api('POST', '/v1/timers', { key: 'walk:scope:live', handler: 'record', delay: '1h' });
      await page.goto(`${ui}#/?prefix=${encodeURIComponent('walk:scope:')}`);
      await page.locator('caption', { hasText: 'with prefix “walk:scope:”' }).waitFor();
      const dialogs: string[] = [];
      page.once('dialog', (dialog) => {
        dialogs.push(dialog.message());
        void dialog.accept();
      });
      await page.getByRole('button', { name: 'Cancel timers with this prefix…' }).click();
      await notice().locator('text=Cancelled 1 timer with prefix “walk:scope:”.').waitFor();
      expect(dialogs).toEqual([
        'Cancel 1 live timer whose key starts with “walk:scope:”? They will not run again. The ended timer kept under it (completed or failed) will be deleted too.',
      ]);
      // what the question said: the failed one is gone too
      expect((await api('GET', keyPath('walk:scope:failed'))).status).toBe(404);
    });

    it('on a phone (375 px) the list and a timer page fit the screen: wide tables scroll in their own box', async () => {
      await page.setViewportSize({ width: 375, height: 740 });
      await page.goto(ui);
      await page.locator('caption').waitFor();
      const pageWidth = () => page.locator('html').evaluate((html) => html.scrollWidth);
      expect(await pageWidth()).toBeLessThanOrEqual(375);
      await timerPage('walk:failed:1', 'failed');
      await page.locator('caption', { hasText: 'newest first' }).waitFor();
      // before, the header's token form, the two columns and the ledger made the page 530 px wide
      expect(await pageWidth()).toBeLessThanOrEqual(375);
      const ledgerBox = page.locator('.table-scroll', {
        has: page.locator('caption', { hasText: 'newest first' }),
      });
      expect(await ledgerBox.evaluate((box) => box.scrollWidth > box.clientWidth)).toBe(true);
    });
  });
}

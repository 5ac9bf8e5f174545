import type { Timer } from '@sundial/core';
import { keyPath } from '@sundial/testing/harness';
import { type ChromiumCluster, type ClusterPage, usePage } from '../chromium-fixture';

/** A 503 as the API answers a write (or, without outcomeUnknown, a read) while Redis is away (docs/spec.md §2, §5.2). */
export const unavailable = (outcomeUnknown: boolean) => ({
  status: 503,
  contentType: 'application/json',
  body: JSON.stringify({
    error: outcomeUnknown
      ? {
          reason: 'unavailable',
          message:
            'Redis became unreachable (Connection is closed.) while this write was in flight: it may or may not have been applied.',
          fix: 'Retry with the same requestId (over HTTP, the same Idempotency-Key header): a repeated request returns the first result and changes nothing more.',
          detail: { code: 'outcome-unknown' },
        }
      : {
          reason: 'unavailable',
          message: 'Redis is unreachable (connect ECONNREFUSED 127.0.0.1:6390); the call changed nothing.',
          fix: 'Check that Redis is up and the connection settings (URL, credentials, TLS) are right, then retry: nothing of the call was applied, so a retry is safe.',
        },
  }),
});

/**
 * What a write that Redis failed tells the operator (docs/spec.md §5.6): one that changed nothing (a retry
 * is safe) apart from one cut off in flight (it may have been applied: look first), each on the page where
 * it was pressed — the Timers page's prefix cancel said "press Refresh", a button that page did not have;
 * and a Schedule again refused for a field copied from its row (a cron's jitter not shorter than its slots'
 * gap, which a row stored before that check may hold) said to write the field otherwise, which the page
 * has no field for, and a Reschedule refused for what was typed said to write `delay`, the API's name. The API's answers are stood in for by the page's network (Redis stays up).
 */
export function describeWriteRefusals(shared: ChromiumCluster): void {
  describe('operator UI: refused writes say what to do on their page, in chromium', () => {
    const cluster = usePage(shared);
    let page: ClusterPage['page'];
    let api: ClusterPage['api'];
    let ui: string;
    beforeAll(() => {
      ({ page, api, ui } = cluster);
      page.on('dialog', (dialog) => void dialog.accept());
    });
    afterEach(() => page.unrouteAll());
    // each locator's waitFor below is a deadline (the page's 10 s default), left as soon as it shows
    const notice = () => page.locator('#notice');

    it('a prefix cancel cut off in flight: may or may not, Retry (the same key) or Refresh (which the page has)', async () => {
      await api('POST', '/v1/timers', { key: 'cut:1', handler: 'record', delay: '2h' });
      await page.route('**/v1/timers?prefix=*', (route) =>
        route.request().method() === 'DELETE' ? route.fulfill(unavailable(true)) : route.fallback(),
      );
      await page.goto(`${ui}#/?prefix=cut%3A`);
      await page.locator('caption', { hasText: 'with prefix “cut:”' }).waitFor();
      await page.getByRole('button', { name: 'Cancel timers with this prefix…' }).click();
      await notice().locator('text=may or may not have been applied').waitFor();
      // a retry with the press's Idempotency-Key is safe (pages/write-retry.ts): the notice offers it
      expect(await notice().textContent()).toMatch(
        /\. Fix: Press Retry: it sends the same request again with the same Idempotency-Key, .*Retry$/,
      );
      await notice().getByRole('button', { name: 'Retry' }).waitFor();
      const refresh = page.getByRole('group', { name: 'Actions on the prefix' }).getByRole('button', {
        name: 'Refresh',
      });
      await refresh.click();
      await page.locator('td.key', { hasText: /^cut:1$/ }).waitFor();
    });

    it('a Pause Redis never received: changed nothing, a retry is safe — not "check first"', async () => {
      const key = 'cut:pause';
      await api('POST', '/v1/timers', { key, handler: 'record', delay: '2h' });
      await page.route(`**${keyPath(key)}/pause`, (route) => route.fulfill(unavailable(false)));
      await cluster.openTimer(key, 'pending');
      await page.getByRole('button', { name: 'Pause' }).click();
      await notice().locator('text=the call changed nothing').waitFor();
      expect(await notice().textContent()).toMatch(/a retry is safe\.$/);
      expect(await notice().textContent()).not.toMatch(/may or may not|whether it was applied/);
    });

    it("Reschedule refused for what was typed: the fix names the page's field, not the API's delay", async () => {
      const key = 'typed:1hr';
      await api('POST', '/v1/timers', { key, handler: 'record', delay: '2h' });
      await cluster.openTimer(key, 'pending');
      await page.getByRole('textbox', { name: /New due time/ }).fill('1hr');
      await page.getByRole('button', { name: 'Reschedule' }).click();
      await notice().locator('text=invalid:').waitFor();
      expect(await notice().textContent()).toMatch(/\. Fix: Enter in New due time "1h"\.$/);
    });

    it("Schedule again of an old cron row whose jitter the API now refuses: the fix is not this page's", async () => {
      const key = 'old:jitter';
      const at = Date.now() - 60_000;
      const row: Partial<Timer> = {
        id: '1p0',
        key,
        version: 1,
        kind: 'cron',
        status: 'completed',
        handler: 'record',
        payload: null,
        scheduledAt: at,
        dueAt: at,
        cron: '* * * * *',
        tz: 'UTC',
        jitter: 120_000,
        runCount: 1,
        awaitTask: true,
        removeOnComplete: false,
        delivery: 'at-least-once',
        lastFiredAt: at,
        lastCompletedAt: at,
        lastErrorAt: null,
        last: null,
      };
      // the row as a release before the jitter check stored it; the POST goes to the API as it is
      await page.route(`**${keyPath(key)}`, (route) =>
        route.request().method() === 'GET' ? route.fulfill({ json: row }) : route.fallback(),
      );
      await cluster.openTimer(key, 'completed');
      await page.getByRole('button', { name: 'Schedule again' }).click();
      await notice().locator('text=invalid:').waitFor();
      const said = await notice().textContent();
      expect(said).toMatch(/jitter .* is not shorter than/);
      expect(said).toContain(
        "Fix: This page copies jitter from the ended timer's row as it is, and the API refuses it now, so it cannot be scheduled again from here. Schedule it anew with another jitter (sundial schedule, or the HTTP API): Write jitter shorter than",
      );
      expect((await api('GET', keyPath(key))).status).toBe(404);
    });
  });
}

import { keyPath } from '@sundial/testing/harness';
import { type ChromiumCluster, usePage } from '../chromium-fixture';
import { unavailable } from './write-refusals';

/**
 * The scheduler away and back, as on-call meets it at 3 a.m. (docs/spec.md §5.6): no answer at all, or a
 * proxy's HTML error page, reads as a reason, a message and a fix (before: the browser's "Failed to fetch"
 * and the JSON parser's "Unexpected token '<'"); and a read's refusal goes once a Refresh of the same page
 * reads again (before: "Redis is unreachable" stayed above the fresh list); the timeline, left open, has a
 * Refresh too (before: nothing read it again, its window's link naming the page already shown); and a
 * Cancel goes back to the list searched (before: to every timer, the search to type again).
 */
export function describeAwayAndBack(shared: ChromiumCluster): void {
  describe('operator UI: the scheduler away and back, in chromium', () => {
    const cluster = usePage(shared);
    afterEach(() => cluster.page.unrouteAll());
    // each locator's waitFor below is a deadline (the page's 10 s default), left as soon as it shows
    const notice = () => cluster.page.locator('#notice');

    it('no answer from the scheduler: reason unreachable, what to check, and the notice goes on a Refresh that reads', async () => {
      const key = 'away:gone';
      await cluster.api('POST', '/v1/timers', { key, handler: 'record', delay: '2h' });
      await cluster.openTimer(key, 'pending');
      await cluster.page.route('**/v1/**', (route) => route.abort('connectionrefused'));
      await cluster.page.getByRole('button', { name: 'Refresh' }).click();
      await notice().locator('text=unreachable:').waitFor();
      expect(await notice().textContent()).toMatch(
        /^unreachable: the scheduler did not answer \(.+\): nothing was read\. Fix: Check that the scheduler at http:\/\/127\.0\.0\.1:\d+ is running and reachable from this browser, then press Refresh\.$/,
      );
      await cluster.page.unrouteAll();
      await cluster.page.getByRole('button', { name: 'Refresh' }).click();
      await cluster.page.getByRole('heading', { level: 1, name: `${key} pending` }).waitFor();
      expect(await notice().textContent()).toBe('');
    });

    it("a proxy's HTML error page: its status and a fix, not the JSON parser's error", async () => {
      await cluster.page.goto(`${cluster.ui}#/?prefix=away:`);
      await cluster.page.getByRole('link', { name: 'away:gone' }).waitFor();
      await cluster.page.route('**/v1/timers?*', (route) =>
        route.fulfill({
          status: 502,
          contentType: 'text/html',
          body: '<html><body>502 Bad Gateway</body></html>',
        }),
      );
      await cluster.page.getByRole('button', { name: 'Refresh' }).click();
      await cluster.page.locator('text=Could not read the timers.').waitFor();
      expect(await notice().textContent()).toBe(
        "http-502: the answer (502 Bad Gateway, text/html) is not the scheduler's API. Fix: Something between this browser and the scheduler answered instead of it (a proxy's error page): check that the scheduler is running and the proxy's route to it, then press Refresh.",
      );
      await cluster.page.unrouteAll();
      await cluster.page.getByRole('button', { name: 'Refresh' }).click();
      await cluster.page.getByRole('link', { name: 'away:gone' }).waitFor();
      expect(await notice().textContent()).toBe('');
    });

    it("Redis away: the list's refusal goes once a Refresh reads the list again", async () => {
      await cluster.page.goto(`${cluster.ui}#/?prefix=away:`);
      await cluster.page.getByRole('link', { name: 'away:gone' }).waitFor();
      await cluster.page.route('**/v1/timers?*', (route) => route.fulfill(unavailable(false)));
      await cluster.page.getByRole('button', { name: 'Refresh' }).click();
      await cluster.page.locator('text=Could not read the timers.').waitFor();
      expect(await notice().textContent()).toMatch(/^unavailable: Redis is unreachable/);
      await cluster.page.unrouteAll();
      await cluster.page.getByRole('button', { name: 'Refresh' }).click();
      await cluster.page.getByRole('link', { name: 'away:gone' }).waitFor();
      expect(await notice().textContent()).toBe('');
    });

    it("the timeline's Refresh reads it again: a timer scheduled since the page was drawn shows", async () => {
      await cluster.page.goto(`${cluster.ui}#/timeline?window=1h&prefix=away:soon`);
      await cluster.page.locator('text=Nothing is due in the next hour.').waitFor();
      await cluster.api('POST', '/v1/timers', { key: 'away:soon', handler: 'record', delay: '30m' });
      await cluster.page.getByRole('button', { name: 'Refresh' }).click();
      await cluster.page.getByRole('link', { name: 'away:soon' }).waitFor();
      expect(await cluster.page.getByRole('heading', { level: 1 }).textContent()).toBe(
        'Timeline: the next hour',
      );
    });

    it('Cancel on a timer opened from a searched list goes back to that list, not to every timer', async () => {
      for (const key of ['back:1', 'back:2'])
        await cluster.api('POST', '/v1/timers', { key, handler: 'record', delay: '2h' });
      const { page } = cluster;
      await page.goto(`${cluster.ui}#/?prefix=back%3A&status=pending`);
      await page.getByRole('link', { name: 'back:1' }).click();
      await page.getByRole('heading', { level: 1, name: 'back:1 pending' }).waitFor();
      page.once('dialog', (dialog) => void dialog.accept());
      await page.getByRole('button', { name: 'Cancel timer' }).click();
      await notice().locator('text=back:1: cancelled.').waitFor();
      expect(page.url()).toMatch(/#\/\?prefix=back%3A&status=pending$/);
      await page.getByRole('link', { name: 'back:2' }).waitFor();
      expect(await page.getByLabel('Key prefix').inputValue()).toBe('back:');
      expect(await page.getByRole('link', { name: 'back:1' }).count()).toBe(0);
    });

    it('an action done keeps its notice across the redraw that reads the timer again', async () => {
      const key = 'away:pause';
      await cluster.api('POST', '/v1/timers', { key, handler: 'record', delay: '2h' });
      await cluster.openTimer(key, 'pending');
      await cluster.page.getByRole('button', { name: 'Pause' }).click();
      await cluster.page.getByRole('heading', { level: 1, name: `${key} paused` }).waitFor();
      expect(await notice().textContent()).toBe(`${key}: paused.`);
      const { body } = await cluster.api<{ status: string }>('GET', keyPath(key));
      expect(body.status).toBe('paused');
    });
  });
}

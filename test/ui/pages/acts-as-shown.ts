import type { Timer } from '@sundial/core';
import { keyPath, waitFor } from '@sundial/testing/harness';
import type { Request } from 'playwright-core';
import { type ChromiumCluster, type ClusterPage, usePage } from '../chromium-fixture';

/**
 * The timer page acts on the timer it shows, once a press (docs/spec.md §5.6): a timer put under the key
 * since the page was read is not acted on (Cancel cancelled the replacement, unseen), one whose version
 * moved is acted on and the notice says it had changed; a double-click sends one write (two Pauses, two
 * Run agains, the second answered `duplicate-key` over the first's "scheduled again"); a cron's next times
 * show its own zone's wall time beside the browser's (the offset `next` answers is the timer's zone's,
 * and beside a browser-zone time it read as another instant). On `shared` (test/ui/cluster-pages.test.ts),
 * one page of its own, which accepts every question.
 */
export function describeActsAsShown(shared: ChromiumCluster): void {
  describe('operator UI: actions act on the timer shown, once, in chromium', () => {
    const cluster = usePage(shared);
    let page: ClusterPage['page'];
    let api: ClusterPage['api'];
    beforeAll(() => {
      ({ page, api } = cluster);
      page.on('dialog', (dialog) => void dialog.accept());
    });
    // each locator's waitFor below is a deadline (the page's 10 s default), left as soon as it shows
    const notice = () => page.locator('#notice');
    const get = async (key: string) => (await api<Timer>('GET', keyPath(key))).body;
    /** The POSTs the page sends while `work` runs, by path. */
    const posts = async (work: () => Promise<void>): Promise<string[]> => {
      const sent: string[] = [];
      const onRequest = (request: Request) => {
        if (request.method() === 'POST') sent.push(new URL(request.url()).pathname);
      };
      page.on('request', onRequest);
      try {
        await work();
      } finally {
        page.off('request', onRequest);
      }
      return sent;
    };

    it('Cancel of a timer replaced since the page was read sends nothing and says so', async () => {
      const key = 'shown:replaced';
      await api('POST', '/v1/timers', { key, handler: 'record', delay: '2h' });
      await cluster.openTimer(key, 'pending');
      const replacement = (await api<Timer>('PUT', keyPath(key), { handler: 'record', delay: '3h' })).body;
      await page.getByRole('button', { name: 'Cancel timer' }).click();
      await notice().locator('text=is another timer since this page was read').waitFor();
      expect(await notice().textContent()).toMatch(
        new RegExp(
          `^changed: “${key}” is another timer .*now id ${replacement.id}.*nothing was sent\\. Fix: Press Refresh`,
        ),
      );
      expect(await get(key)).toMatchObject({ id: replacement.id, status: 'pending' });
    });

    it('Pause of a timer rescheduled since the page was read pauses it and says it had changed', async () => {
      const key = 'shown:moved';
      await api('POST', '/v1/timers', { key, handler: 'record', delay: '2h' });
      await cluster.openTimer(key, 'pending');
      await api('POST', `${keyPath(key)}/reschedule`, { delay: '3h' });
      await page.getByRole('button', { name: 'Pause' }).click();
      await notice()
        .locator(`text=${key}: paused. It had changed since this page was read (version 1, then 2).`)
        .waitFor();
      expect(await get(key)).toMatchObject({ status: 'paused', version: 3 });
    });

    it('a double-click on Pause or Trigger now sends one', async () => {
      const key = 'shown:twice';
      await api('POST', '/v1/timers', { key, handler: 'record', delay: '2h' });
      await cluster.openTimer(key, 'pending');
      const paused = await posts(async () => {
        await page.getByRole('button', { name: 'Pause' }).dblclick();
        await page.getByRole('heading', { level: 1, name: `${key} paused` }).waitFor();
      });
      expect(paused).toEqual([`${keyPath(key)}/pause`]);
      await notice().locator(`text=${key}: paused.`).waitFor();
      await page.getByRole('button', { name: 'Resume' }).click();
      await page.getByRole('heading', { level: 1, name: `${key} pending` }).waitFor();
      const triggered = await posts(async () => {
        await page.getByRole('button', { name: 'Trigger now' }).dblclick();
        await notice().locator(`text=${key}: triggered.`).waitFor();
      });
      expect(triggered).toEqual([`${keyPath(key)}/trigger`]);
    });

    it('a double-click on Run again schedules it once, and says so', async () => {
      const key = 'shown:again';
      await api('POST', '/v1/timers', { key, handler: 'record', delay: 0, removeOnComplete: false });
      // deadline (waitFor's 10 s): left as soon as the worker has run it
      await waitFor(async () => (await get(key)).status === 'completed', { what: `${key} to complete` });
      await cluster.openTimer(key, 'completed');
      const sent = await posts(async () => {
        await page.getByRole('button', { name: 'Run again' }).dblclick();
        await notice().locator(`text=${key}: scheduled again, due now`).waitFor();
      });
      expect(sent).toEqual(['/v1/timers']);
      expect(await notice().getAttribute('class')).toBe('info');
    });

    it("a cron's next times: the browser's zone, and the timer's own zone with its offset", async () => {
      const key = 'shown:cron';
      await api('POST', '/v1/timers', { key, handler: 'record', cron: '0 9 * * *', tz: 'America/New_York' });
      const cdp = await page.context().newCDPSession(page);
      await cdp.send('Emulation.setTimezoneOverride', { timezoneId: 'Asia/Tokyo' });
      try {
        await cluster.openTimer(key, 'pending');
        const next = page.locator('table', { has: page.locator('caption', { hasText: 'due times' }) });
        await next.locator('th', { hasText: "In the timer's zone (America/New_York)" }).waitFor();
        const [first] = await next.locator('tbody tr').allInnerTexts();
        // 09:00 in New York (UTC-05:00 in winter, -04:00 in summer) is 23:00 or 22:00 in Tokyo (UTC+09:00)
        expect(first).toMatch(/ (23|22):00:00\t\d{4}-\d\d-\d\d 09:00:00 \(UTC-0[45]:00\)\tin /);
      } finally {
        await cdp.send('Emulation.setTimezoneOverride', { timezoneId: '' });
        await cdp.detach();
      }
    });
  });
}

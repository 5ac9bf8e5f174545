import { type ChromiumCluster, type ClusterPage, usePage } from '../chromium-fixture';

/** How far behind the scheduler's clock the browser's is. */
const BROWSER_BEHIND_MS = 20 * 60_000;
/**
 * "in 5 min" for the timer due in 5 min, read seconds after it was scheduled: "in 4.9 min" once 3 s have
 * passed (a loaded host); the skew would read "in 25 min".
 */
const IN_5_MIN = /in (?:5|4\.\d) min/;

/**
 * docs/spec.md §5.6: the operator UI measures "now" from the scheduler's (`Sundial-Now` on every answer:
 * Redis's clock, which due times are on), not from the browser's. Here the page's `Date` runs 20 min
 * behind (an init script, before the UI's modules load): a timer due in 5 min read "in 25 min", and the
 * timeline's next hour ended 20 min early, leaving out a timer due in 50 min.
 */
export function describeServerNow(shared: ChromiumCluster): void {
  describe('operator UI in a browser whose clock is off', () => {
    const cluster = usePage(shared);
    let page: ClusterPage['page'];
    let api: ClusterPage['api'];
    let ui: string;

    beforeAll(async () => {
      ({ page, api, ui } = cluster);
      await page.addInitScript((behindMs: number) => {
        const RealDate = Date;
        class SkewedDate extends RealDate {
          constructor(...args: ConstructorParameters<DateConstructor> | []) {
            if (args.length === 0) super(RealDate.now() - behindMs);
            else super(...(args as ConstructorParameters<DateConstructor>));
          }
          static override now(): number {
            return RealDate.now() - behindMs;
          }
        }
        globalThis.Date = SkewedDate as DateConstructor;
      }, BROWSER_BEHIND_MS);
      for (const [key, minutes] of [
        ['clock:soon', 5],
        ['clock:later', 50],
        ['clock:past-hour', 75],
      ] as const) {
        const created = await api('POST', '/v1/timers', { key, handler: 'record', delay: minutes * 60_000 });
        expect(created.status).toBe(201);
      }
    });

    it('the skew is there: the page reads its own clock 20 min behind', async () => {
      await page.goto(`${ui}#/?prefix=clock:`);
      const behind = await page.evaluate(() => performance.timeOrigin + performance.now() - Date.now());
      expect(Math.abs(behind - BROWSER_BEHIND_MS)).toBeLessThan(5_000);
    });

    it('the timers list and a timer page say "in 5 min" for a timer due in 5 min', async () => {
      await page.goto(`${ui}#/?prefix=clock:`);
      const row = page.locator('tr', { has: page.locator('td.key', { hasText: /^clock:soon$/ }) });
      await row.waitFor();
      await expect(row.textContent()).resolves.toMatch(IN_5_MIN);
      await page.goto(`${ui}#/timer/${encodeURIComponent('clock:soon')}`);
      await page.getByRole('heading', { level: 1, name: 'clock:soon pending' }).waitFor();
      await expect(page.locator('main').textContent()).resolves.toMatch(IN_5_MIN);
    });

    it("the timeline's next hour is the scheduler's: the timer due in 50 min is on it, not the one in 75", async () => {
      // a fresh page: the timeline's window is the first thing it computes, before any answer of its own
      await page.goto('about:blank');
      await page.goto(`${ui}#/timeline?window=1h&prefix=clock:`);
      await page.locator('caption', { hasText: 'Due in the next hour' }).waitFor();
      const rows = await page.locator('tbody tr').allTextContents();
      expect(rows).toEqual([
        expect.stringMatching(new RegExp(`${IN_5_MIN.source}.*clock:soon`)),
        expect.stringMatching(/in (?:50|49) min.*clock:later/),
      ]);
    });
  });
}

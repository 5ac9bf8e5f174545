import { type ChromiumCluster, usePage } from '../chromium-fixture';

/** `Read at 2026-12-08 01:40:22`: the scheduler's now when the page read what it shows (format.ts formatTime). */
const READ_AT = /Read at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d/;

/**
 * Where a page leaves the operator (docs/spec.md §5.6): when what it shows was read, where focus goes after
 * Pause and Resume, and where a timer page that could not load leads back to. Keys `place:` of their own.
 */
export function describePagePlaces(shared: ChromiumCluster): void {
  describe('operator UI: when a page was read, focus after an action, the way back, in chromium', () => {
    const cluster = usePage(shared);
    // each locator's waitFor below is a deadline (the page's 10 s default), left as soon as it shows

    // Nothing said when a page was read: "in 5 min" stayed on screen, going stale, until Refresh.
    it('the list, the timeline and a timer page say when they were read', async () => {
      const { page } = cluster;
      await cluster.api('POST', '/v1/timers', { key: 'place:read', handler: 'record', delay: '1h' });
      await page.goto(`${cluster.ui}#/?prefix=place:`);
      await page.locator('td', { hasText: 'place:read' }).waitFor();
      await page.getByText(READ_AT).waitFor();
      await page.goto(`${cluster.ui}#/timeline`);
      await page.getByText(READ_AT).waitFor();
      await cluster.openTimer('place:read', 'pending');
      await page.getByText(READ_AT).waitFor();
    });

    // After Pause the page is drawn again with Pause disabled: focus fell to <main>, the keyboard's place lost.
    it('Pause and Resume by keyboard leave focus on the control that undoes them', async () => {
      const { page } = cluster;
      await cluster.api('POST', '/v1/timers', { key: 'place:pause', handler: 'record', every: '1h' });
      await cluster.openTimer('place:pause', 'pending');
      await page.getByRole('button', { name: 'Pause' }).focus();
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { level: 1, name: 'place:pause paused' }).waitFor();
      await page.locator('button:focus', { hasText: /^Resume$/ }).waitFor();
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { level: 1, name: 'place:pause pending' }).waitFor();
      await page.locator('button:focus', { hasText: /^Pause$/ }).waitFor();
    });

    // A timer page that failed to load linked "All timers" to #/, not the filtered list it was opened from.
    it('a timer page that could not load leads back to the list it came from', async () => {
      const { page } = cluster;
      const list = '#/?prefix=place%3Agone&status=pending';
      await page.goto(`${cluster.ui}${list}`);
      await page.getByText('No timers match.').waitFor();
      // a hash of the same document: a hashchange from the list, as a click on a timer's link
      await page.goto(`${cluster.ui}#/timer/place%3Agone%3A1`);
      await page.getByRole('heading', { level: 1, name: 'place:gone:1' }).waitFor();
      const back = page.getByRole('link', { name: 'Back to the list' });
      expect(await back.getAttribute('href')).toBe(list);
      await back.click();
      await page.waitForURL(new RegExp(`#${list.slice(1).replace(/[?]/g, '\\?')}$`));
    });
  });
}

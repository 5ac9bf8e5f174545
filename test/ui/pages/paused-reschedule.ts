import type { Timer } from '@sundial/core';
import { keyPath } from '@sundial/testing/harness';
import { type ChromiumCluster, usePage } from '../chromium-fixture';

/**
 * A reschedule resumes a paused timer (docs/spec.md §5.2, §5.6): the page says so before the press (beside
 * its button) and after (its notice). Before, a timer paused at 3 a.m. to stop it firing was rescheduled to
 * later with a button that said only "Reschedule", and ran on the new time, the notice saying "rescheduled".
 */
export function describePausedReschedule(shared: ChromiumCluster): void {
  describe('operator UI: Reschedule of a paused timer says it resumes it, in chromium', () => {
    const cluster = usePage(shared);
    // each locator's waitFor below is a deadline (the page's 10 s default), left as soon as it shows

    it('the form says Reschedule resumes it; the notice that it was resumed', async () => {
      const key = 'paused:move';
      await cluster.api('POST', '/v1/timers', { key, handler: 'record', every: '1h' });
      await cluster.api('POST', `${keyPath(key)}/pause`);
      await cluster.openTimer(key, 'paused');
      const { page } = cluster;
      await page.getByLabel(/New due time/).fill('2h');
      const form = page.getByRole('form', { name: 'Reschedule' });
      expect(await form.textContent()).toContain('It is paused: Reschedule resumes it.');
      await page.getByRole('button', { name: 'Reschedule', exact: true }).click();
      await page.getByRole('heading', { level: 1, name: `${key} pending` }).waitFor();
      expect(await page.locator('#notice').textContent()).toMatch(
        new RegExp(
          `^${key}: rescheduled and resumed \\(it was paused\\), due \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d\\.$`,
        ),
      );
      expect((await cluster.api<Timer>('GET', keyPath(key))).body.status).toBe('pending');
      // pending now: no more to say
      expect(await form.textContent()).not.toContain('paused');
    });
  });
}

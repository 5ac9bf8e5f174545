import type { Timer } from '@sundial/core';
import { keyPath, waitFor } from '@sundial/testing/harness';
import { type ChromiumCluster, type ClusterPage, usePage } from '../chromium-fixture';

/**
 * The timer page's actions say what they did (docs/spec.md §3.4, §5.2, §5.6), though the page may have
 * been read before another change: Cancel a live timer cancelled, or — the timer having ended since, kept
 * by `removeOnComplete: false` — its kept row removed with nothing cancelled (DELETE answers 200
 * `{ cancelled: false, removed }`), or — someone else having cancelled it since — that it was already
 * cancelled at the time its ledger says, as the CLI does (it showed the DELETE's raw 404); Pause of a timer paused since, and Resume of one resumed since, that
 * nothing changed. On `shared` (test/ui/cluster-pages.test.ts), one page of its own.
 */
export function describeActionAnswers(shared: ChromiumCluster): void {
  describe('operator UI: actions say what they did, in chromium', () => {
    const cluster = usePage(shared);
    let page: ClusterPage['page'];
    let api: ClusterPage['api'];
    beforeAll(() => ({ page, api } = cluster));
    const timerPage = (key: string, status: string) => cluster.openTimer(key, status);
    // each locator's waitFor below is a deadline (the page's 10 s default), left as soon as it shows
    const notice = () => page.locator('#notice');
    const get = async (key: string) => (await api<Timer>('GET', keyPath(key))).body;
    const press = (name: string) => page.getByRole('button', { name }).click();
    /** Presses Cancel timer and accepts its question. */
    const cancel = async (): Promise<void> => {
      page.once('dialog', (dialog) => void dialog.accept());
      await page.getByRole('button', { name: 'Cancel timer' }).click();
    };

    it('a live timer: cancelled', async () => {
      await api('POST', '/v1/timers', { key: 'answer:live', handler: 'record', delay: '2h' });
      await timerPage('answer:live', 'pending');
      await cancel();
      await notice().locator('text=answer:live: cancelled.').waitFor();
      expect(page.url()).toMatch(/#\/$/);
      expect((await api('GET', keyPath('answer:live'))).status).toBe(404);
    });

    it('a timer that ended after the page was read: its kept row removed, nothing cancelled', async () => {
      const key = 'answer:ended';
      // due after the page has loaded: 5 s leave a loaded host room to show it pending first
      await api('POST', '/v1/timers', { key, handler: 'record', delay: '5s', removeOnComplete: false });
      await timerPage(key, 'pending');
      // deadline (waitFor's default 10 s, raised to 20): left as soon as the worker has run it
      await waitFor(async () => (await get(key)).status === 'completed', {
        what: `${key} to complete`,
        timeoutMs: 20_000,
      });
      // the page still shows it pending: its Cancel is offered, and the API answers what it did
      await cancel();
      await notice()
        .locator(
          `text=${key} had ended (completed) before the cancel: nothing was cancelled; its kept row was removed.`,
        )
        .waitFor();
      expect((await api('GET', keyPath(key))).status).toBe(404);
    });

    it('a timer someone else cancelled after the page was read: already cancelled at its time, nothing changed', async () => {
      const key = 'answer:gone';
      await api('POST', '/v1/timers', { key, handler: 'record', delay: '2h' });
      await timerPage(key, 'pending');
      // another operator cancels it: this page still offers Cancel, whose DELETE now meets no timer (404)
      await api('DELETE', keyPath(key));
      const [cancelled] = (
        await api<{ entries: { at: string; event: string }[] }>('GET', `${keyPath(key)}/history`)
      ).body.entries;
      expect(cancelled.event).toBe('cancelled');
      await cancel();
      // the ledger's time as the page shows times (format.ts formatTime: the browser's zone)
      const at = await page.evaluate((iso) => {
        const date = new Date(iso);
        const pad = (n: number) => String(n).padStart(2, '0');
        return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
      }, cancelled.at);
      await notice().locator(`text=${key} was already cancelled at ${at}: nothing changed.`).waitFor();
      expect(await notice().getAttribute('class')).toBe('info');
      expect(page.url()).toMatch(/#\/$/);
    });

    it('Pause of a timer paused since the page was read, Resume of one resumed since: nothing changed', async () => {
      const key = 'answer:paused';
      await api('POST', '/v1/timers', { key, handler: 'record', delay: '2h' });
      await timerPage(key, 'pending');
      // another operator pauses it: this page still offers Pause
      await api('POST', `${keyPath(key)}/pause`);
      await press('Pause');
      await notice().locator(`text=${key} was already paused: nothing changed.`).waitFor();
      await page.getByRole('heading', { level: 1, name: `${key} paused` }).waitFor();
      await api('POST', `${keyPath(key)}/resume`);
      await press('Resume');
      await notice().locator(`text=${key} was not paused: nothing changed.`).waitFor();
      expect(await get(key)).toMatchObject({ status: 'pending', version: 3 });
      // and when the press does it, it says so
      await page.getByRole('heading', { level: 1, name: `${key} pending` }).waitFor();
      await press('Pause');
      await notice().locator(`text=${key}: paused.`).waitFor();
      expect(await get(key)).toMatchObject({ status: 'paused', version: 4 });
      // no due times while paused, which is not "will not run again" (as `sundial next` says it, §5.6)
      await page.getByText('No due times while it is paused: press Resume').waitFor();
    });
  });
}

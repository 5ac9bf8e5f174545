import { keyPath, waitFor } from '@sundial/testing/harness';
import { type ChromiumCluster, type ClusterPage, usePage } from '../chromium-fixture';

/**
 * What a timer's page says of it is what the timer will do (docs/spec.md §3.4, §3.9, §5.6): a paused
 * interval's Due showed its old `dueAt`, which a resume does not arm (the next slot after then), and an
 * ended timer's showed a time as if to come; a ledger's `lost` entry of a run put back to run again
 * (reason `requeued`, at-least-once) read as a run lost; its counters (runs, failures, stale, skipped,
 * lost, requeued) were not shown at all. On `shared` (test/ui/cluster-pages.test.ts), one page of its own.
 */
export function describeTimerTruth(shared: ChromiumCluster): void {
  describe("operator UI: a timer's page tells what the timer will do, in chromium", () => {
    const cluster = usePage(shared);
    let page: ClusterPage['page'];
    let api: ClusterPage['api'];
    beforeAll(() => ({ page, api } = cluster));
    afterEach(() => page.unrouteAll());
    // each locator's waitFor below is a deadline (the page's 10 s default), left as soon as it shows
    const dueRow = () => page.locator('dt:text-is("Due") + dd');

    it('Due: a paused interval has none until resumed; a paused one-shot its own; an ended timer its last', async () => {
      await api('POST', '/v1/timers', { key: 'due:every', handler: 'record', every: '1h' });
      await api('POST', `${keyPath('due:every')}/pause`);
      await cluster.openTimer('due:every', 'paused');
      expect(await dueRow().textContent()).toBe('none while paused: once resumed, the next slot after then');

      await api('POST', '/v1/timers', { key: 'due:once', handler: 'record', delay: '2h' });
      await api('POST', `${keyPath('due:once')}/pause`);
      await cluster.openTimer('due:once', 'paused');
      expect(await dueRow().textContent()).toMatch(
        /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d, once resumed \(at once if it has passed by then\)$/,
      );

      await api('POST', '/v1/timers', {
        key: 'due:ended',
        handler: 'record',
        delay: 0,
        removeOnComplete: false,
      });
      // deadline (waitFor's 10 s): left as soon as the worker has run it
      await waitFor(
        async () => (await api<{ status: string }>('GET', keyPath('due:ended'))).body.status === 'completed',
        {
          what: 'due:ended to complete',
        },
      );
      await cluster.openTimer('due:ended', 'completed');
      expect(await dueRow().textContent()).toMatch(/ \(its last run's: it will not run again\)$/);
    });

    it('the Ledger: a lost entry put back to run again says so, apart from a run recorded lost', async () => {
      const key = 'ledger:lost';
      await api('POST', '/v1/timers', { key, handler: 'record', every: '1h' });
      const at = new Date().toISOString();
      // the entries as a reconciler writes them (§3.8): a worker's lease ran out, at-least-once and at-most-once
      const entries = [
        {
          at,
          event: 'lost',
          version: 1,
          workerId: 'worker-b',
          reason: 'lost',
          message: 'the worker was lost',
        },
        { at, event: 'lost', version: 1, workerId: 'worker-a', reason: 'requeued', due: at },
        { at, event: 'scheduled', version: 1 },
      ];
      await page.route(`**${keyPath(key)}/describe?*`, async (route) => {
        const described = (await (await route.fetch()).json()) as Record<string, unknown>;
        await route.fulfill({ json: { ...described, history: entries } });
      });
      await cluster.openTimer(key, 'pending');
      const ledger = page.locator('table', { has: page.locator('caption', { hasText: 'newest first' }) });
      await ledger.locator('tbody tr').nth(2).waitFor();
      const rows = await ledger.locator('tbody tr').allInnerTexts();
      expect(rows[0]).toMatch(
        /^.*\tlost\t1\tworker-b\treason lost: recorded lost, not run again · the worker was lost$/,
      );
      expect(rows[1]).toMatch(/^.*\tlost\t1\tworker-a\treason requeued: put back to run again · due \d{4}-/);
    });

    it('Counters: a timer that ran twice and failed once shows 2 runs, 1 failure, and what limits them', async () => {
      const key = 'counters:twice';
      // its first run ends at once; its second (runCount > 1: payload.rerunMs) outlasts the timeout and fails;
      // both are trigger runs, so the timer stays pending on its hourly schedule
      await api('POST', '/v1/timers', {
        key,
        handler: 'slow',
        every: '1h',
        payload: { ms: 0, rerunMs: 60_000 },
        timeout: '200ms',
      });
      const row = async () =>
        (await api<{ status: string; runCount: number; lastErrorAt: number | null }>('GET', keyPath(key)))
          .body;
      await api('POST', `${keyPath(key)}/trigger`);
      // deadline (waitFor's 10 s): left as soon as the first run has completed and the timer is armed again
      await waitFor(
        async () => {
          const { runCount, status } = await row();
          return runCount === 1 && status === 'pending';
        },
        { what: `${key}'s first run to complete` },
      );
      await api('POST', `${keyPath(key)}/trigger`);
      // deadline (waitFor's 10 s): a trigger run's failure leaves the interval on its schedule (§3.4)
      await waitFor(async () => (await row()).lastErrorAt !== null, { what: `${key}'s second run to fail` });
      await cluster.openTimer(key, 'pending');
      const counters = page.locator('table', { has: page.locator('caption', { hasText: 'Counters' }) });
      await counters.locator('tbody tr').nth(5).waitFor();
      const shown = (await counters.locator('tbody tr').allInnerTexts()).map((r) =>
        r.split('\t').slice(0, 2),
      );
      expect(shown).toEqual([
        ['Runs', '2'],
        ['Failures', '1'],
        ['Stale', '0'],
        ['Skipped', '0'],
        ['Lost', '0'],
        ['Requeued', '0'],
      ]);
      // the counts derived from the ledger say what they cover, as the spec words it (§3.9)
      const note = page.locator(`#${await counters.getAttribute('aria-describedby')}`);
      expect(await note.textContent()).toContain(
        "counted over the ledger's last 50 entries, not the timer's whole life",
      );
    });
  });
}

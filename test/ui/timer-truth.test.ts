import { keyPath, waitFor } from '@sundial/testing/harness';
import { type ClusterPage, useClusterInChromium } from './chromium-fixture';

/**
 * What a timer's page says of it is what the timer will do (docs/spec.md §3.4, §3.9, §5.6): a paused
 * interval's Due showed its old `dueAt`, which a resume does not arm (the next slot after then), and an
 * ended timer's showed a time as if to come; a ledger's `lost` entry of a run put back to run again
 * (reason `requeued`, at-least-once) read as a run lost. A private Redis, one scheduler and one worker.
 */
describe("operator UI: a timer's page tells what the timer will do, in chromium", () => {
  const cluster = useClusterInChromium();
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
      { at, event: 'lost', version: 1, workerId: 'worker-b', reason: 'lost', message: 'the worker was lost' },
      { at, event: 'lost', version: 1, workerId: 'worker-a', reason: 'requeued', due: at },
      { at, event: 'scheduled', version: 1 },
    ];
    await page.route(`**${keyPath(key)}/history?*`, (route) => route.fulfill({ json: { key, entries } }));
    await cluster.openTimer(key, 'pending');
    const ledger = page.locator('table', { has: page.locator('caption', { hasText: 'newest first' }) });
    await ledger.locator('tbody tr').nth(2).waitFor();
    const rows = await ledger.locator('tbody tr').allInnerTexts();
    expect(rows[0]).toMatch(
      /^.*\tlost\t1\tworker-b\treason lost: recorded lost, not run again · the worker was lost$/,
    );
    expect(rows[1]).toMatch(/^.*\tlost\t1\tworker-a\treason requeued: put back to run again · due \d{4}-/);
  });
});

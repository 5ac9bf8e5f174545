import { keyPath } from '@sundial/testing/harness';
import type { Request, Route } from 'playwright-core';
import { type ChromiumCluster, usePage } from '../chromium-fixture';

/** The API's 503 for a write whose answer Redis lost in flight (docs/spec.md §5.2): it may have been applied. */
const OUTCOME_UNKNOWN = {
  status: 503,
  contentType: 'application/json',
  body: JSON.stringify({
    error: {
      reason: 'unavailable',
      message:
        'Redis became unreachable (Connection is closed.) while this write was in flight: it may or may not have been applied.',
      fix: 'Retry with the same requestId (over HTTP, the same Idempotency-Key header): a repeated request returns the first result and changes nothing more.',
      detail: { code: 'outcome-unknown' },
    },
  }),
};

/**
 * A write whose answer was lost is retried safely (docs/spec.md §5.6): each press sends a fresh
 * Idempotency-Key, and the notice of a lost answer offers Retry, the same request with the same key, which
 * the API answers as it answered the first (applied once). Before, the page sent no key and could only say
 * "press Refresh to see whether it was applied". The first write goes to the scheduler (it is applied) and
 * its answer is replaced by the 503; the Retry goes through.
 */
export function describeWriteRetry(shared: ChromiumCluster): void {
  describe('operator UI: a write whose answer was lost is retried with its Idempotency-Key, in chromium', () => {
    const cluster = usePage(shared);
    // every question (Cancel's) is accepted; each test's routes go after it
    beforeAll(() => cluster.page.on('dialog', (dialog) => void dialog.accept()));
    afterEach(() => cluster.page.unrouteAll());
    // each locator's waitFor below is a deadline (the page's 10 s default), left as soon as it shows
    const notice = () => cluster.page.locator('#notice');

    /** Routes `method` to `url`: the first is applied and answered 503; each is noted with its key and answer. */
    async function loseFirstAnswer(url: string, method: string) {
      const sent: { key: string | undefined; answer: unknown }[] = [];
      await cluster.page.route(url, async (route: Route) => {
        if (route.request().method() !== method) return route.fallback();
        const key = (await route.request().allHeaders())['idempotency-key'];
        const response = await route.fetch();
        sent.push({ key, answer: await response.json() });
        return sent.length === 1 ? route.fulfill(OUTCOME_UNKNOWN) : route.fulfill({ response });
      });
      return sent;
    }

    it('Trigger now whose answer was lost: Retry sends the same key, answered as the first, triggered once', async () => {
      const key = 'lost:trigger';
      await cluster.api('POST', '/v1/timers', { key, handler: 'record', every: '2h' });
      const sent = await loseFirstAnswer(`**${keyPath(key)}/trigger`, 'POST');
      await cluster.openTimer(key, 'pending');
      await cluster.page.getByRole('button', { name: 'Trigger now' }).click();
      await notice().locator('text=may or may not have been applied').waitFor();
      expect(await notice().textContent()).toContain('Fix: Press Retry: it sends the same request again');
      await notice().getByRole('button', { name: 'Retry' }).click();
      await notice().locator(`text=${key}: triggered.`).waitFor();
      expect(await notice().textContent()).toBe(
        `${key}: triggered. Retried with the same Idempotency-Key: applied once.`,
      );
      expect(sent).toHaveLength(2);
      expect(sent[0].key).toMatch(/^[0-9a-f-]{36}$/);
      expect(sent[1].key).toBe(sent[0].key);
      // the API answered the retry with the first trigger's answer (a second trigger: another version)
      expect(sent[1].answer).toEqual(sent[0].answer);
      const history = await cluster.api<{ entries: { event: string }[] }>('GET', `${keyPath(key)}/history`);
      expect(history.body.entries.filter((entry) => entry.event === 'triggered')).toHaveLength(1);
    });

    it('Cancel whose answer was lost: Retry is answered as the first (cancelled), not not-found', async () => {
      const key = 'lost:cancel';
      await cluster.api('POST', '/v1/timers', { key, handler: 'record', delay: '2h' });
      const sent = await loseFirstAnswer(`**${keyPath(key)}`, 'DELETE');
      await cluster.openTimer(key, 'pending');
      await cluster.page.getByRole('button', { name: 'Cancel timer' }).click();
      await notice().getByRole('button', { name: 'Retry' }).click();
      await notice().locator(`text=${key}: cancelled.`).waitFor();
      expect(cluster.page.url()).toMatch(/#\/$/);
      expect(sent.map((write) => write.key)).toEqual([sent[0].key, sent[0].key]);
      expect(sent[1].answer).toEqual({ cancelled: true });
      expect((await cluster.api('GET', keyPath(key))).status).toBe(404);
    });

    it('each press sends a fresh key', async () => {
      const key = 'lost:fresh';
      await cluster.api('POST', '/v1/timers', { key, handler: 'record', delay: '2h' });
      const keys: string[] = [];
      const onRequest = (request: Request) => {
        const sentKey = request.headers()['idempotency-key'];
        if (request.method() === 'POST' && sentKey) keys.push(sentKey);
      };
      cluster.page.on('request', onRequest);
      await cluster.openTimer(key, 'pending');
      await cluster.page.getByRole('button', { name: 'Pause' }).click();
      await notice().locator(`text=${key}: paused.`).waitFor();
      await cluster.page.getByRole('button', { name: 'Resume' }).click();
      await notice().locator(`text=${key}: resumed.`).waitFor();
      cluster.page.off('request', onRequest);
      expect(keys).toHaveLength(2);
      expect(keys[1]).not.toBe(keys[0]);
    });
  });
}

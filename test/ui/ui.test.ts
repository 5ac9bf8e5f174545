import type { Timer, TimerSpec } from '@sundial/core';
import { RedisTimers } from '@sundial/redis';
import {
  type AppProcess,
  clusterEnv,
  ensureBuilt,
  type HttpClient,
  httpClient,
  keyPath,
  killAll,
  type RedisServer,
  ROOT,
  spawnCluster,
  startRedis,
  waitFor,
} from '@sundial/testing/harness';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium, type Page, type Request } from 'playwright-core';

/** Debian's `chromium` package (.ci/run installs it when missing); CHROMIUM_PATH points elsewhere. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/**
 * The README's screenshots are rewritten with `SUNDIAL_UI_SCREENSHOTS=1 npm run test:jest -- test/ui`;
 * an ordinary run takes them too (a page that fails to render fails here) but keeps them out of the tree.
 */
const SCREENSHOTS = process.env.SUNDIAL_UI_SCREENSHOTS
  ? join(ROOT, 'test', 'ui', 'screenshots')
  : mkdtempSync(join(tmpdir(), 'sundial-ui-'));
const TOKEN = 'ui-test-token';
const PARTITIONS = 2;
const TIMERS = 1000;

/**
 * The operator UI at /ui in a real browser (Debian's chromium driven by playwright-core) against a
 * running cluster: private Redis, one scheduler with an API token and one worker, as child processes.
 * The tests run in order on one page; screenshots go to test/ui/screenshots (linked from the README)
 * when SUNDIAL_UI_SCREENSHOTS is set.
 */
describe('operator UI in chromium against a running cluster', () => {
  let redis: RedisServer;
  let apps: { schedulers: AppProcess[]; workers: AppProcess[] };
  let api: HttpClient;
  let client: RedisTimers;
  let browser: Browser;
  let page: Page;
  /** files outside the API that a page asked for and the scheduler did not have (the icon was one) */
  const missing: string[] = [];

  beforeAll(async () => {
    [redis] = await Promise.all([startRedis(), ensureBuilt()]);
    const env = clusterEnv(redis.url, { SUNDIAL_API_TOKEN: TOKEN, SUNDIAL_PARTITIONS: String(PARTITIONS) });
    apps = await spawnCluster(env, 1, 1);
    api = httpClient(apps.schedulers[0].url, { authorization: `Bearer ${TOKEN}` });
    client = new RedisTimers({ connection: redis.url, partitions: PARTITIONS });
    // 1,000 timers due over the next 1,000 minutes: load:0000 first.
    const specs: TimerSpec[] = Array.from({ length: TIMERS }, (_, n) => ({
      key: `load:${String(n).padStart(4, '0')}`,
      handler: 'record',
      delay: (n + 1) * 60_000,
      payload: { customer: `customer-${n}` },
    }));
    for (let n = 0; n < TIMERS; n += 250) await client.scheduleMany(specs.slice(n, n + 250));
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on('response', (response) => {
      if (response.status() === 404 && !new URL(response.url()).pathname.startsWith('/v1/'))
        missing.push(response.url());
    });
    // Well inside jest's 30 s per test, so a missing element fails with its own message.
    page.setDefaultTimeout(10_000);
    mkdirSync(SCREENSHOTS, { recursive: true });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await client?.dispose();
    await killAll([...(apps?.schedulers ?? []), ...(apps?.workers ?? [])]);
    await redis?.stop();
  });

  const screenshot = (name: string) =>
    page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
  const notice = () => page.locator('#notice');

  it('without the token the list is refused with the reason and fix; with it, the timers show', async () => {
    await page.goto(`${apps.schedulers[0].url}/ui/`);
    await page.locator('#notice.error').waitFor();
    // the fix is what to do in this page, not the HTTP header to send
    expect(await notice().textContent()).toBe(
      "unauthorized: missing Authorization header. Fix: Enter the scheduler's API token (its SUNDIAL_API_TOKEN) in the API token field above and press Use.",
    );
    await page.getByLabel('API token').fill(TOKEN);
    await page.getByRole('button', { name: 'Use' }).click();
    await page.locator('caption', { hasText: 'Timers 1–100' }).waitFor();
  });

  it('pages through 1,000 timers by prefix, 100 a page, each key exactly once', async () => {
    await page.getByRole('searchbox', { name: 'Key prefix' }).fill('load:');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.locator('caption', { hasText: 'Timers 1–100 with prefix “load:”' }).waitFor();
    await screenshot('timers');
    const seen: string[] = [];
    let pages = 0;
    for (;;) {
      pages++;
      await page.locator('.pager .muted', { hasText: new RegExp(`^Page ${pages}$`) }).waitFor();
      seen.push(...(await page.locator('td.key').allTextContents()));
      const next = page.getByRole('button', { name: 'Next page →' });
      if (await next.isDisabled()) break;
      await next.click();
    }
    // The cursor of a full page may lead to an empty last one (Redis pages partition by partition).
    expect(pages).toBeGreaterThanOrEqual(TIMERS / 100);
    expect(seen).toHaveLength(TIMERS);
    // Redis lists partition by partition, each in key order: together, every key exactly once.
    expect(new Set(seen).size).toBe(TIMERS);
    expect(seen.every((key) => key.startsWith('load:'))).toBe(true);
    // And back: Previous returns to the page before.
    await page.getByRole('button', { name: '← Previous page' }).click();
    await page.locator('.pager .muted', { hasText: new RegExp(`^Page ${pages - 1}$`) }).waitFor();
    expect(await page.locator('td.key').count()).toBe(100);
    await page.locator('button:focus', { hasText: '← Previous page' }).waitFor(); // kept across the redraw
  });

  it('the timeline lists what is due in the next hour, soonest first', async () => {
    await page.goto(`${apps.schedulers[0].url}/ui/#/timeline?window=1h`);
    await page.locator('caption', { hasText: 'Due in the next hour' }).waitFor();
    const keys = await page.locator('td.key').allTextContents();
    // Due every minute from now + 1 min: the first 59 fall inside the hour (the 60th at its edge).
    expect(keys.slice(0, 59)).toEqual(
      Array.from({ length: 59 }, (_, n) => `load:${String(n).padStart(4, '0')}`),
    );
    expect(keys.length).toBeLessThanOrEqual(60);
    await screenshot('timeline');
  });

  it("a timer's page: the payload only on request, its ledger after a run, and Pause pauses it", async () => {
    const key = 'ui:hourly';
    await api('POST', '/v1/timers', {
      key,
      handler: 'record',
      every: '1h',
      payload: { secret: 'top-s3cret' },
      timeout: '15m',
    });
    await page.goto(`${apps.schedulers[0].url}/ui/#/timer/${encodeURIComponent(key)}`);
    await page.getByRole('heading', { level: 1, name: `${key} pending` }).waitFor();
    // the timer's run timeout, beside its schedule and policies
    await page.locator('dt:text-is("Timeout") + dd', { hasText: '15 min a run' }).waitFor();
    expect(await page.content()).not.toContain('top-s3cret');
    await page.getByRole('button', { name: 'Show payload' }).click();
    await page.locator('#payload pre', { hasText: 'top-s3cret' }).waitFor();
    await page.getByRole('button', { name: 'Hide payload' }).click();
    expect(await page.content()).not.toContain('top-s3cret');

    // Trigger runs it now; once the run is over the ledger shows it.
    await page.getByRole('button', { name: 'Trigger now' }).click();
    await waitFor(
      async () => {
        const timer = (await api<Timer>('GET', keyPath(key))).body;
        return timer.runCount === 1 && timer.status === 'pending';
      },
      { timeoutMs: 20_000, what: `${key} to run once` },
    );
    await page.getByRole('button', { name: 'Refresh' }).click();
    const ledger = page.locator('table', { has: page.locator('caption', { hasText: 'newest first' }) });
    await ledger.locator('td', { hasText: /^completed$/ }).waitFor();
    const events = await ledger.locator('tbody tr td:nth-child(2)').allTextContents();
    expect(events).toEqual(expect.arrayContaining(['scheduled', 'triggered', 'claimed', 'completed']));
    expect(events[events.length - 1]).toBe('scheduled');
    await page.locator('caption', { hasText: 'The next 10 due times' }).waitFor();
    await screenshot('timer');

    // A redraw keeps the keyboard's place: focus on the new Refresh button, not sent to <body>.
    const drawn = await page.getByRole('button', { name: 'Refresh' }).elementHandle();
    await drawn!.focus();
    await page.keyboard.press('Enter');
    await page.waitForFunction((button) => !button?.isConnected, drawn);
    await page.locator('button:focus', { hasText: /^Refresh$/ }).waitFor();

    await page.getByRole('button', { name: 'Pause' }).click();
    await page.locator('#notice', { hasText: `${key}: paused.` }).waitFor();
    expect((await api<Timer>('GET', keyPath(key))).body.status).toBe('paused');
    await page.getByRole('heading', { level: 1, name: `${key} paused` }).waitFor();
    expect(await page.getByRole('button', { name: 'Resume' }).isEnabled()).toBe(true);
  });

  it('Cancel asks first, then cancels and returns to the list', async () => {
    const key = 'ui:cancel-me';
    await api('POST', '/v1/timers', { key, handler: 'record', delay: '1h' });
    await page.goto(`${apps.schedulers[0].url}/ui/#/timer/${encodeURIComponent(key)}`);
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Cancel timer' }).click();
    await page.locator('#notice', { hasText: `${key}: cancelled.` }).waitFor();
    await page.waitForURL(/\/ui\/#\/$/);
    expect((await api('GET', keyPath(key))).status).toBe(404);
  });

  it('a refusal met after the page was drawn reads as what to do in the UI, not the HTTP call to make', async () => {
    const key = 'ui:refused:1';
    await api('POST', '/v1/timers', { key, handler: 'record', delay: '1h' });
    await page.goto(`${apps.schedulers[0].url}/ui/#/timer/${encodeURIComponent(key)}`);
    await page.getByRole('heading', { level: 1, name: `${key} pending` }).waitFor();
    // paused behind the page's back: its Trigger button is still enabled, the API refuses
    await api('POST', `${keyPath(key)}/pause`);
    await page.getByRole('button', { name: 'Trigger now' }).click();
    await page.locator('#notice.error', { hasText: 'inactive:' }).waitFor();
    expect(await notice().textContent()).toMatch(/ while it is paused\. Fix: Press Resume first\.$/);
    // a key that is not there: search its scope on the Timers page (the API's fix names GET /v1/timers)
    await page.goto(`${apps.schedulers[0].url}/ui/#/timer/${encodeURIComponent('ui:gone:7')}`);
    await page.locator('#notice.error', { hasText: 'not-found:' }).waitFor();
    expect(await notice().textContent()).toContain(
      'Fix: Check the key; a search of Timers for the key prefix “ui:gone:” lists the timers under it. One listed as completed or failed has ended (kept by removeOnComplete false): press Run again (a one-shot) or Schedule again (an interval or cron) on its page, or schedule it again to run it. One removed when it ended (a one-shot after its run, by default) keeps its history for 7 days: the Ledger on its page (#/timer/ui%3Agone%3A7).',
    );
    expect(await notice().textContent()).not.toMatch(/\/v1|GET |\?prefix=|\.\./);
    // a one-shot that ran and was removed: its page says so and still shows its Ledger, as the fix says
    // (before, the page of a key with no timer showed only the refusal)
    const once = 'ui:once:1';
    await api('POST', '/v1/timers', { key: once, handler: 'record', delay: 0 });
    await waitFor(async () => (await api('GET', keyPath(once))).status === 404, { what: `${once} to run` });
    await page.goto(`${apps.schedulers[0].url}/ui/#/timer/${encodeURIComponent(once)}`);
    await page.getByRole('heading', { level: 2, name: 'Ledger' }).waitFor();
    const ledger = page.locator('table', { has: page.locator('caption', { hasText: 'newest first' }) });
    await ledger.locator('td', { hasText: /^completed$/ }).waitFor();
    expect(await notice().textContent()).toMatch(/^not-found: .*ui:once:1/);
    // a prefix the API refuses: the fix names the form's field
    await page.goto(`${apps.schedulers[0].url}/ui/#/`);
    await page.getByRole('searchbox', { name: 'Key prefix' }).fill('a b');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.locator('#notice.error', { hasText: 'Fix: Enter a Key prefix of 0–256 characters' }).waitFor();
  });

  it('cancels the live timers of the searched prefix after a confirmation naming their count; refuses an empty prefix', async () => {
    for (const key of ['bulk:a:1', 'bulk:a:2', 'bulk:a:3', 'bulk:ab'])
      await api('POST', '/v1/timers', { key, handler: 'record', delay: '1h' });
    const dialogs: string[] = [];
    const answer = (accept: boolean) =>
      page.once('dialog', (dialog) => {
        dialogs.push(dialog.message());
        void (accept ? dialog.accept() : dialog.dismiss());
      });
    const live = async (prefix: string) =>
      (await api<{ items: Timer[] }>('GET', `/v1/timers?prefix=${encodeURIComponent(prefix)}&limit=1000`))
        .body.items.length;
    // No prefix: refused in the page, no question asked, nothing sent.
    await page.goto(`${apps.schedulers[0].url}/ui/#/`);
    await page.locator('caption', { hasText: 'Timers 1–100' }).waitFor();
    await page.getByRole('button', { name: 'Cancel timers with this prefix…' }).click();
    await page.locator('#notice.error', { hasText: 'needs a non-empty key prefix' }).waitFor();
    expect(dialogs).toEqual([]);
    expect(await live('load:')).toBe(TIMERS);

    await page.goto(`${apps.schedulers[0].url}/ui/#/?prefix=${encodeURIComponent('bulk:a:')}`);
    await page.locator('caption', { hasText: 'with prefix “bulk:a:”' }).waitFor();
    const cancel = page.getByRole('button', { name: 'Cancel timers with this prefix…' });
    answer(false); // dismissed: nothing cancelled
    await cancel.click();
    await waitFor(() => dialogs.length === 1, { what: 'the confirmation' });
    expect(await live('bulk:')).toBe(4);
    answer(true);
    await cancel.click();
    await page.locator('#notice', { hasText: 'Cancelled 3 timers with prefix “bulk:a:”.' }).waitFor();
    expect(dialogs).toEqual([
      'Cancel 3 live timers whose key starts with “bulk:a:”? They will not run again.',
      'Cancel 3 live timers whose key starts with “bulk:a:”? They will not run again.',
    ]);
    expect(await live('bulk:')).toBe(1); // bulk:ab is outside the prefix
    await page.locator('p', { hasText: 'No timers match.' }).waitFor();
  });

  it('asks to cancel a prefix of 10,500 timers after reading 10 pages of them, not every one', async () => {
    const specs = Array.from({ length: 10_500 }, (_, n): TimerSpec => ({
      key: `many:${String(n).padStart(5, '0')}`,
      handler: 'record',
      delay: '1h',
    }));
    for (let n = 0; n < specs.length; n += 1000) await client.scheduleMany(specs.slice(n, n + 1000));
    // the count's reads (the list itself pages by 100)
    const countReads: string[] = [];
    const onRequest = (request: Request) => {
      const url = new URL(request.url());
      if (url.pathname === '/v1/timers' && url.searchParams.get('limit') === '1000')
        countReads.push(url.search);
    };
    page.on('request', onRequest);
    try {
      await page.goto(`${apps.schedulers[0].url}/ui/#/?prefix=many%3A`);
      await page.locator('caption', { hasText: 'with prefix “many:”' }).waitFor();
      const question = new Promise<string>((resolve) =>
        page.once('dialog', (dialog) => {
          resolve(dialog.message());
          void dialog.dismiss();
        }),
      );
      await page.getByRole('button', { name: 'Cancel timers with this prefix…' }).click();
      expect(await question).toBe(
        'Cancel 10,000 or more live timers (counted among the first 10,000 listed) whose key starts with “many:”? They will not run again. ' +
          'Ended timers kept under it (completed or failed, if any) will be deleted too.',
      );
      expect(countReads).toHaveLength(10);
    } finally {
      page.off('request', onRequest);
      await client.cancelAll('many:');
    }
  });

  /**
   * Text from the API is shown as text: markup in a run's error message, a payload, meta or a refusal
   * (a crafted `#/timer/<key>` link) never becomes an element, and no handler of it runs.
   */
  it('markup in an error message, a payload, meta or a refusal is shown as text, never run', async () => {
    const markup = (n: number) => `<img src=x onerror="window.pwned=${n}"><script>window.pwned=${n}</script>`;
    const key = 'ui:markup';
    // An `http` payload whose url is not a URL: the run fails, its message quoting the url as sent.
    await api('POST', '/v1/timers', {
      key,
      handler: 'http',
      delay: 0,
      payload: { url: markup(1), note: markup(2) },
      meta: { owner: markup(3) },
      removeOnComplete: false,
    });
    await waitFor(async () => (await api<Timer>('GET', keyPath(key))).body.status === 'failed', {
      what: `${key} to fail`,
    });
    await page.goto(`${apps.schedulers[0].url}/ui/#/timer/${encodeURIComponent(key)}`);
    await page.locator('dt:text-is("Last error") + dd', { hasText: markup(1) }).waitFor();
    await page.getByRole('button', { name: 'Show payload' }).click();
    await page.locator('#payload pre', { hasText: 'window.pwned=3' }).waitFor();
    await page.goto(`${apps.schedulers[0].url}/ui/#/timer/${encodeURIComponent(markup(4))}`);
    await page.locator('#notice.error', { hasText: '<img src=x' }).waitFor();
    expect(await page.evaluate(() => (globalThis as { pwned?: number }).pwned)).toBeUndefined();
    expect(await page.locator('main img, main script, #notice img').count()).toBe(0);
  });

  /**
   * A page without an icon link makes a headed browser ask for /favicon.ico, a 404 and a console error
   * on every page (headless chromium does not ask): the page names its own icon, which is served.
   */
  it('the page names its icon, which is served; no file the pages asked for was missing', async () => {
    const href = await page.locator('link[rel="icon"]').getAttribute('href');
    expect(href).toBeTruthy();
    const icon = await page.request.get(new URL(href!, page.url()).toString());
    expect(icon.status()).toBe(200);
    expect(icon.headers()['content-type']).toMatch(/^image\/svg\+xml/);
    expect(missing).toEqual([]);
  });
});

import type { Page } from 'playwright-core';
import { useSchedulerInChromium } from './chromium-fixture';

/** A name chromium resolves to the scheduler's loopback address, as a rebinding attacker's DNS would. */
const REBOUND = 'rebound.attacker.test';

/**
 * The scheduler's pages under their Content-Security-Policy in a real browser
 * (libs/server/src/security-headers.ts): the operator UI and Swagger UI at /docs work and report
 * no violation; neither can be framed by another site (clickjacking); a page reached through a name
 * rebound to the scheduler's address is refused (libs/server/src/allowed-hosts.ts); and a page on another
 * site cannot write through the API of a scheduler without a token (apps/scheduler/src/cross-site.ts).
 */
describe('the scheduler’s pages in chromium: CSP, framing, rebinding, cross-site writes', () => {
  // Another site, whose page frames the URL of its `frame` parameter.
  const fixture = useSchedulerInChromium(
    (request, response) => {
      const target = new URL(request.url ?? '/', 'http://x').searchParams.get('frame') ?? '';
      response.setHeader('content-type', 'text/html');
      response.end(`<!doctype html><title>elsewhere</title><iframe src="${target}"></iframe>`);
    },
    [`--host-resolver-rules=MAP ${REBOUND} 127.0.0.1`],
  );
  let page: Page;
  /** what the page reported: CSP violations (the DOM event), console errors and uncaught exceptions */
  let reported: string[];

  beforeEach(async () => {
    page = await fixture.browser.newPage();
    page.setDefaultTimeout(10_000);
    // A deadline, not a measurement: a page's load event waits for every script, Swagger UI's ~1.6 MB
    // bundle among them, which a starved host parsed in more than 10 s (an official CI run, 4 suites on
    // 2 cores); jest's 30 s per test is the bound around it.
    page.setDefaultNavigationTimeout(25_000);
    reported = [];
    await page.exposeFunction('reportViolation', (text: string) => reported.push(`CSP ${text}`));
    await page.addInitScript({
      content: `document.addEventListener('securitypolicyviolation', (event) =>
        window.reportViolation(event.violatedDirective + ' ' + event.blockedURI + ' at ' + event.sourceFile + ':' + event.lineNumber))`,
    });
    page.on('console', (message) => message.type() === 'error' && reported.push(message.text()));
    page.on('pageerror', (error) => reported.push(String(error)));
  });

  afterEach(() => page?.close());

  it('Swagger UI at /docs renders and expands an operation, no violation reported', async () => {
    await page.goto(`${fixture.scheduler.url}/docs`);
    const create = page.locator('.opblock-post', { hasText: '/v1/timers' }).first();
    await create.locator('.opblock-summary').click();
    await create.locator('.opblock-body').waitFor();
    expect(await page.locator('.opblock').count()).toBeGreaterThan(10);
    expect(reported).toEqual([]);
  });

  it('the operator UI renders its timers page, no violation reported', async () => {
    const made = await fetch(`${fixture.scheduler.url}/v1/timers`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ key: 'csp:shown', handler: 'log', delay: '1h' }),
    });
    expect(made.status).toBe(201);
    await page.goto(`${fixture.scheduler.url}/ui/`);
    await page.locator('td.key', { hasText: 'csp:shown' }).waitFor();
    expect(reported).toEqual([]);
  });

  it.each(['/ui/', '/docs'])('another site cannot frame %s', async (path) => {
    const target = new URL(fixture.scheduler.url);
    target.hostname = 'localhost'; // another origin than the framing page's 127.0.0.1
    const framed = `${target.origin}${path}`;
    const answered = page.waitForResponse((response) => response.url() === framed);
    await page.goto(`${fixture.siteUrl}/?frame=${encodeURIComponent(framed)}`);
    expect((await answered).status()).toBe(200);
    // The browser refuses to show it: the frame ends on its error page, never the scheduler's.
    const frame = page.frames().find((f) => f !== page.mainFrame());
    const deadline = Date.now() + 5_000;
    while (!frame?.url().startsWith('chrome-error:') && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(frame?.url()).toMatch(/^chrome-error:/);
  });

  it('a page reached through a name rebound to the scheduler is refused; by localhost it is served', async () => {
    const port = new URL(fixture.scheduler.url).port;
    const rebound = await page.goto(`http://${REBOUND}:${port}/ui/`);
    expect(rebound?.status()).toBe(403);
    expect(await rebound?.json()).toMatchObject({ error: { reason: 'forbidden', field: 'host' } });
    expect((await page.goto(`http://localhost:${port}/ui/`))?.status()).toBe(200);
  });

  // A text/plain POST with `no-cors` needs no preflight: the browser sends it, the scheduler refuses it.
  it('a page on another site cannot schedule a timer through a no-cors text/plain POST', async () => {
    const { scheduler } = fixture;
    await page.goto(`${fixture.siteUrl}/`);
    const target = new URL(scheduler.url);
    target.hostname = 'localhost'; // called as localhost from the site's 127.0.0.1
    await page.evaluate(async (api) => {
      const spec = { key: 'csrf:made', handler: 'log', delay: '1h' };
      const init = { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' } } as const;
      await fetch(`${api}/v1/timers`, { ...init, body: JSON.stringify(spec) });
    }, target.origin);
    expect((await scheduler.api('GET', '/v1/timers/csrf%3Amade')).status).toBe(404);
  });
});

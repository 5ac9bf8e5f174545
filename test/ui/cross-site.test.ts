import { useSchedulerInChromium } from './chromium-fixture';

/**
 * The attack `apps/scheduler/src/cross-site.ts` stops, in a real browser: a page on another site
 * (127.0.0.1, the scheduler called as localhost) POSTs a TimerSpec as text/plain with `no-cors`,
 * which needs no preflight, to a scheduler without SUNDIAL_API_TOKEN. Nothing is written.
 */
describe('a cross-site page in chromium against a scheduler without a token', () => {
  const fixture = useSchedulerInChromium((_request, response) =>
    response.end('<!doctype html><title>elsewhere</title>'),
  );

  it('cannot schedule a timer through a no-cors text/plain POST', async () => {
    const { browser, scheduler } = fixture;
    const page = await browser.newPage();
    await page.goto(`${fixture.siteUrl}/`);
    const target = new URL(scheduler.url);
    target.hostname = 'localhost';
    await page.evaluate(async (api) => {
      const spec = { key: 'csrf:made', handler: 'log', delay: '1h' };
      const init = { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' } } as const;
      await fetch(`${api}/v1/timers`, { ...init, body: JSON.stringify(spec) });
    }, target.origin);
    const made = await fetch(`${scheduler.url}/v1/timers/csrf%3Amade`);
    expect(made.status).toBe(404);
  });
});

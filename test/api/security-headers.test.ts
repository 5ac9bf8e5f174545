import { policyFor } from '@sundial/server';
import { useScheduler } from './scheduler-fixture';

/**
 * Every answer of the scheduler carries the security headers (libs/server/src/security-headers.ts):
 * no MIME sniffing, no referrer, never framed; JSON loads nothing, the UI and /docs only their own
 * files (test/ui/security-headers.test.ts runs the pages under them in chromium).
 */
describe('security headers on every answer', () => {
  const fixture = useScheduler();

  it.each([
    ['GET', '/v1/timers', 200],
    ['GET', '/v1/timers/nope', 404],
    ['POST', '/v1/timers', 403], // a cross-site refusal, answered before the body is read
    ['GET', '/metrics', 200],
    ['GET', '/docs-json', 200],
    ['GET', '/docs', 200],
  ])('%s %s (%i)', async (method, path, status) => {
    const response = await fetch(fixture.url + path, {
      method,
      headers: { 'sec-fetch-site': 'cross-site' },
    });
    await response.arrayBuffer();
    expect(response.status).toBe(status);
    expect({
      nosniff: response.headers.get('x-content-type-options'),
      referrer: response.headers.get('referrer-policy'),
      frame: response.headers.get('x-frame-options'),
      csp: response.headers.get('content-security-policy'),
    }).toEqual({ nosniff: 'nosniff', referrer: 'no-referrer', frame: 'DENY', csp: policyFor(path) });
    expect(policyFor(path)).toContain("frame-ancestors 'none'");
  });

  it('JSON may load nothing; the UI its own files only; /docs also inline styles and data: images', () => {
    expect(policyFor('/v1/timers?prefix=a')).toMatch(/^default-src 'none';/);
    expect(policyFor('/docs-json')).toMatch(/^default-src 'none';/);
    expect(policyFor('/ui/app.js')).toMatch(/^default-src 'self'; object-src 'none';/);
    expect(policyFor('/docs/swagger-ui-bundle.js')).toContain("style-src 'self' 'unsafe-inline'");
    expect(policyFor('/docs')).not.toContain('script-src');
  });
});

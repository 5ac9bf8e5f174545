import type { Timer } from '@sundial/core';
import { type ErrorBody, keyPath } from '@sundial/testing/harness';
import { useScheduler } from './scheduler-fixture';

/**
 * A web page an operator visits must not drive a scheduler its browser can reach (docs/spec.md §5.2):
 * a form or `fetch(…, { mode: 'no-cors' })` POST with a text/plain body needs no CORS preflight, and
 * every body is read as JSON, so without SUNDIAL_API_TOKEN a cross-site page could schedule, trigger,
 * pause. Browsers mark such requests (`Sec-Fetch-Site`, `Origin`); the scheduler refuses them with 403
 * before any body is read. This scheduler has no token, as `npm start` and a private network run it.
 */
describe('cross-site requests from a browser', () => {
  const fixture = useScheduler();
  const spec = { key: 'csrf:k', handler: 'log', delay: '1h' };
  const textPlain = (headers: Record<string, string>) => ({
    raw: JSON.stringify(spec),
    headers: { 'content-type': 'text/plain;charset=UTF-8', ...headers },
  });

  it.each([
    ['Sec-Fetch-Site cross-site', { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' }],
    ['Sec-Fetch-Site same-site', { 'sec-fetch-site': 'same-site', origin: 'http://other.localhost' }],
    ['an Origin of another host', { origin: 'https://evil.example' }],
    ['an opaque Origin (sandboxed frame, file:)', { origin: 'null' }],
  ])('a POST with %s is refused 403 forbidden, nothing written', async (_name, headers) => {
    const before = (await fixture.raw.keys('*')).sort();
    const reply = await fixture.api<ErrorBody>('POST', '/v1/timers', undefined, textPlain(headers));
    expect(reply.status).toBe(403);
    expect(reply.body.error).toMatchObject({
      reason: 'forbidden',
      message: expect.stringContaining('cross-site'),
      fix: expect.stringContaining('SUNDIAL_API_TOKEN'),
    });
    expect((await fixture.raw.keys('*')).sort()).toEqual(before);
  });

  it('a cross-site trigger, pause or cancel is refused too; a cross-site GET is not', async () => {
    expect((await fixture.api('POST', '/v1/timers', spec)).status).toBe(201);
    const crossSite = { headers: { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' } };
    for (const [method, path] of [
      ['POST', `${keyPath(spec.key)}/trigger`],
      ['POST', `${keyPath(spec.key)}/pause`],
      ['DELETE', keyPath(spec.key)],
      ['POST', `/V1/timers/${encodeURIComponent(spec.key)}/pause`],
    ]) {
      expect((await fixture.api(method, path, undefined, crossSite)).status).toBe(403);
    }
    const read = await fixture.api<Timer>('GET', keyPath(spec.key), undefined, crossSite);
    expect(read).toMatchObject({ status: 200, body: { status: 'pending', version: 1 } });
  });

  it('the same origin (the operator UI), and clients that send no Origin (curl, the CLI), go on', async () => {
    const host = new URL(fixture.url).host;
    const sameOrigin = { 'sec-fetch-site': 'same-origin', origin: `http://${host}` };
    const made = await fixture.api(
      'PUT',
      keyPath('csrf:same'),
      { handler: 'log', delay: '1h' },
      { headers: sameOrigin },
    );
    expect(made.status).toBe(201);
    expect(
      (
        await fixture.api('POST', `${keyPath('csrf:same')}/pause`, undefined, {
          headers: { origin: `http://${host}` },
        })
      ).status,
    ).toBe(200);
    expect((await fixture.api('DELETE', keyPath('csrf:same'))).status).toBe(200);
  });
});

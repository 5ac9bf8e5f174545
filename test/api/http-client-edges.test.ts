import type { Timer } from '@sundial/core';
import { type ErrorBody, keyPath, rawHttp } from '@sundial/testing/harness';
import { useScheduler } from './scheduler-fixture';

/**
 * docs/spec.md §5.2, what a client hits at the edge and was told in the wrong terms: a reused
 * Idempotency-Key was refused naming `requestId` (for PUT, an id derived from the header, which the
 * caller never sent), and a retry whose JSON fields came in another order was a conflict; a URL too
 * long for the server was told to send "well-formed HTTP"; a charset the parser cannot read was
 * told to "See GET /docs"; a path with the wrong method was 404 (as if the path were wrong), OPTIONS
 * was 404 too (on /metrics, /docs, /docs-json and /ui/, outside the OpenAPI document, until later); a trailing "/" was dropped (`GET /v1/timers/`, a key left empty, listed every timer).
 */
describe('HTTP API: edges a client hits', () => {
  const app = useScheduler();
  const { api, refused } = app;
  const keyed = (value: string) => ({ headers: { 'Idempotency-Key': value } });

  describe('Idempotency-Key reused', () => {
    const conflict = (key: string) => ({
      reason: 'idempotency-conflict',
      field: 'Idempotency-Key',
      message: `Idempotency-Key "${key}" was already used for another request (another route, timer, query or body).`,
      fix: 'Retry with exactly the same request, or send a new Idempotency-Key for a new request.',
    });

    it.each([
      ['POST', '/v1/timers', { key: 'ik:post', handler: 'log', delay: '1h' }, { delay: '2h' }],
      ['PUT', keyPath('ik:put'), { handler: 'log', delay: '1h' }, { delay: '3h' }],
    ])(
      '%s %s with another body: 422 naming the header as sent, nothing changed',
      async (method, path, body, change) => {
        const header = `ik-${method}`;
        expect((await api(method, path, body, keyed(header))).status).toBe(201);
        const before = (await app.raw.keys('*')).sort();
        const reply = await api<ErrorBody>(method, path, { ...body, ...change }, keyed(header));
        expect(reply.status).toBe(422);
        expect(reply.body.error).toEqual(conflict(header));
        expect((await app.raw.keys('*')).sort()).toEqual(before);
      },
    );

    it('sent twice: 400 saying so (Node joins them into one text), nothing changed', async () => {
      const before = (await app.raw.keys('*')).sort();
      const body = '{"key":"ik:twice","handler":"log","delay":"1h"}';
      const reply = await rawHttp(
        Number(new URL(app.url).port),
        'POST /v1/timers HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
          `Idempotency-Key: a\r\nIdempotency-Key: b\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
      );
      expect(reply.status).toBe(400);
      expect(JSON.parse(reply.body)).toEqual({
        error: {
          reason: 'invalid',
          field: 'Idempotency-Key',
          message: 'Idempotency-Key was sent 2 times; a request has one.',
          fix: 'Send one Idempotency-Key header, the same on every retry of the request.',
        },
      });
      expect((await app.raw.keys('*')).sort()).toEqual(before);
    });

    it('the same fields in another order (another JSON encoder) are a retry: the first answer', async () => {
      const sent = '{"key":"ik:order","handler":"log","delay":"1h","payload":{"a":1,"b":[1,{"y":2,"x":1}]}}';
      const first = await api<Timer>('POST', '/v1/timers', undefined, { raw: sent, ...keyed('ik-order') });
      expect(first.status).toBe(201);
      const again = '{"payload":{"b":[1,{"x":1,"y":2}],"a":1},"delay":"1h","handler":"log","key":"ik:order"}';
      const retry = await api<Timer>('POST', '/v1/timers', undefined, { raw: again, ...keyed('ik-order') });
      expect(retry).toMatchObject({ status: 201, body: first.body });
      // an array's order is its content: another order is another request
      const other = '{"payload":{"b":[{"x":1,"y":2},1],"a":1},"delay":"1h","handler":"log","key":"ik:order"}';
      expect((await api('POST', '/v1/timers', undefined, { raw: other, ...keyed('ik-order') })).status).toBe(
        422,
      );
    });
  });

  describe('methods', () => {
    it.each([
      ['PATCH', '/v1/timers/k', 'GET, PUT, DELETE, HEAD, OPTIONS'],
      ['POST', keyPath('a/b:c'), 'GET, PUT, DELETE, HEAD, OPTIONS'],
      ['PUT', '/v1/timers', 'GET, POST, DELETE, HEAD, OPTIONS'],
      ['GET', `${keyPath('k')}/pause`, 'POST, OPTIONS'],
      ['DELETE', '/health/live', 'GET, HEAD, OPTIONS'],
      // the paths of the table outside the OpenAPI document (were 404 "Cannot POST /metrics")
      ['POST', '/metrics', 'GET, HEAD, OPTIONS'],
      ['DELETE', '/docs-json', 'GET, HEAD, OPTIONS'],
      ['PUT', '/docs', 'GET, HEAD, OPTIONS'],
      ['POST', '/ui/', 'GET, HEAD, OPTIONS'],
    ])(
      '%s %s, a path whose route takes other methods: 405 with Allow, not 404',
      async (method, path, allow) => {
        const reply = await fetch(`${app.url}${path}`, { method });
        expect(reply.status).toBe(405);
        expect(reply.headers.get('allow')).toBe(allow);
        const takes = allow.replace(/, HEAD|, OPTIONS/g, '');
        expect(await reply.json()).toEqual({
          error: {
            reason: 'invalid',
            message: `${method} is not a method of ${path}, which takes ${takes}`,
            fix: `Use ${takes} (GET /docs lists each route).`,
          },
        });
      },
    );

    it('OPTIONS answers 204 with Allow on a route’s path, 404 elsewhere', async () => {
      const options = (path: string) => fetch(`${app.url}${path}`, { method: 'OPTIONS' });
      const timers = await options('/v1/timers');
      expect([timers.status, timers.headers.get('allow')]).toEqual([204, 'GET, POST, DELETE, HEAD, OPTIONS']);
      const describe = await options(`${keyPath('a/b')}/describe`);
      expect([describe.status, describe.headers.get('allow')]).toEqual([204, 'GET, HEAD, OPTIONS']);
      const metrics = await options('/metrics');
      expect([metrics.status, metrics.headers.get('allow')]).toEqual([204, 'GET, HEAD, OPTIONS']);
      expect((await options('/v1/nope')).status).toBe(404);
    });

    it('HEAD runs the GET route without a body', async () => {
      const head = await fetch(`${app.url}/v1/timers?prefix=ik:`, { method: 'HEAD' });
      expect([head.status, await head.text()]).toEqual([200, '']);
      const refused = await fetch(`${app.url}/v1/timers?prefx=ik:`, { method: 'HEAD' });
      expect(refused.status).toBe(400);
    });
  });

  it.each([
    ['GET', '/v1/timers/'],
    ['POST', '/v1/timers/'],
    ['GET', `${keyPath('ik:post')}/`],
    ['DELETE', `${keyPath('ik:post')}/?prefix=`],
  ])(
    '%s %s, a /v1 path ending in "/" (a key left empty?): 404 saying so, nothing done',
    async (method, path) => {
      const body = method === 'POST' ? { key: 'slash:1', handler: 'log', delay: '1h' } : undefined;
      expect(await refused(method, path, body, 404)).toEqual({
        reason: 'not-found',
        message: `no route ${method} ${path.split('?')[0]}: the path ends with "/" (a key left empty?)`,
        fix: 'Remove the trailing "/"; a key goes URL-encoded after /v1/timers/ (a "/" in it as %2F).',
      });
    },
  );

  it('a path over the server’s header limit (a key of 20,000 characters): 431 saying what to shorten', async () => {
    const reply = await api<ErrorBody>('GET', keyPath('k'.repeat(20_000)));
    expect(reply.status).toBe(431);
    expect(reply.body.error).toEqual({
      reason: 'invalid',
      message: 'the request line and headers are larger than the server takes (HPE_HEADER_OVERFLOW)',
      fix: 'Shorten the URL and headers (16 KiB in all): a timer key is at most 256 characters, URL-encoded in the path.',
    });
    // a long key under the limit is the key rule's refusal, with the field
    expect((await api<ErrorBody>('GET', keyPath('k'.repeat(7000)))).body.error).toMatchObject({
      reason: 'invalid',
      field: 'key',
      message: expect.stringMatching(/is 7000 characters long/),
    });
  });

  it('a key that is not percent-encoding (`%E0%A4%A`): 400 saying how to encode it; no X-Powered-By', async () => {
    const reply = await fetch(`${app.url}/v1/timers/%E0%A4%A`);
    expect(reply.status).toBe(400);
    expect(reply.headers.get('x-powered-by')).toBeNull();
    expect(await reply.json()).toEqual({
      error: {
        reason: 'invalid',
        message: "Failed to decode param '%E0%A4%A'",
        fix: 'URL-encode the key in the path (encodeURIComponent): a key is letters, digits and : _ - . / @, a "/" in it as %2F.',
      },
    });
  });

  it('a body in a charset the parser cannot read: 415 saying to send UTF-8', async () => {
    const reply = await api<ErrorBody>('POST', '/v1/timers', undefined, {
      raw: '{"key":"cs:1","handler":"log","delay":"1h"}',
      headers: { 'content-type': 'application/json; charset=latin1' },
    });
    expect(reply.status).toBe(415);
    expect(reply.body.error).toEqual({
      reason: 'invalid',
      message: 'unsupported charset "LATIN1"',
      fix: 'Send the body as UTF-8 JSON: Content-Type application/json, with no charset or charset=utf-8.',
    });
  });
});

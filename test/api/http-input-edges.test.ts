import type { ListResult, Timer } from '@sundial/core';
import { type ErrorBody, keyPath } from '@sundial/testing/harness';
import { gzipSync } from 'node:zlib';
import { useScheduler } from './scheduler-fixture';

/**
 * docs/spec.md §5.2, input that said two things and was answered as if it said one:
 * - a JSON body naming a field twice (`{"delay":"1h","delay":"2h"}`) was taken with its last value, where
 *   other JSON readers keep the first: now 400 `invalid` on that field, nothing changed;
 * - an integer past 2^53 (a snowflake id in the payload) was stored as another number, the nearest double
 *   (12345678901234567890 became 12345678901234567000): now 400 on its path, saying to send a string;
 * - `dueBefore` was read by `Date.parse`, which makes an instant of nearly any text (`hello 2` is
 *   2001-02-01, `12/25` a day of 2001, a zone-less time the server's local time): a listing "due before" it
 *   answered for another instant than the caller meant. Now epoch ms or an ISO instant with its zone;
 * - a UTF-8 body labelled `charset=utf8` (a label of UTF-8 for browsers and many clients) was refused
 *   415 telling the caller to send UTF-8, which it had;
 * - a Content-Encoding the parser does not take (or a body that is not what it says) was told to fix its
 *   charset, or to send JSON, not its encoding.
 */
describe('HTTP API: input that says two things', () => {
  const app = useScheduler();
  const { api } = app;

  /** Sends `raw` as the body: refused with 400 and nothing changed in Redis; the error. */
  async function refusedRaw(method: string, path: string, raw: string): Promise<ErrorBody['error']> {
    const before = (await app.raw.keys('*')).sort();
    const reply = await api<ErrorBody>(method, path, undefined, { raw });
    expect(reply.status).toBe(400);
    expect((await app.raw.keys('*')).sort()).toEqual(before);
    return reply.body.error;
  }

  describe('a JSON body that names a field twice', () => {
    it.each([
      ['key', '{"key":"dk:1","handler":"log","delay":"1h","key":"dk:2"}'],
      ['delay', '{"key":"dk:1","handler":"log","delay":"1h","delay":"2h"}'],
      // the same name however it is escaped
      ['key', '{"key":"dk:1","handler":"log","delay":"1h","k\\u0065y":"dk:2"}'],
      ['payload.order.id', '{"key":"dk:1","handler":"log","delay":"1h","payload":{"order":{"id":1,"id":2}}}'],
      [
        'payload.lines[1].sku',
        '{"key":"dk:1","handler":"log","delay":"1h","payload":{"lines":[{"sku":1},{"sku":2,"sku":3}]}}',
      ],
    ])('POST /v1/timers: 400 invalid on %s, nothing written', async (field, raw) => {
      expect(await refusedRaw('POST', '/v1/timers', raw)).toEqual({
        reason: 'invalid',
        field,
        message: `the body gives "${field}" more than once`,
        fix: 'Send each field once: JSON readers differ on which of the repeated values they keep.',
      });
      expect((await api('GET', keyPath('dk:1'))).status).toBe(404);
    });

    it('reschedule and PUT: refused, the timer as it was', async () => {
      const timer = (await api<Timer>('POST', '/v1/timers', { key: 'dk:live', handler: 'log', delay: '1h' }))
        .body;
      const reschedule = `${keyPath('dk:live')}/reschedule`;
      expect(await refusedRaw('POST', reschedule, '{"delay":"1h","delay":"2h"}')).toMatchObject({
        field: 'delay',
      });
      expect(
        await refusedRaw('PUT', keyPath('dk:live'), '{"handler":"log","every":"1h","every":"2h"}'),
      ).toMatchObject({
        field: 'every',
      });
      expect((await api('GET', keyPath('dk:live'))).body).toEqual(timer);
    });

    it('one name in several objects, and names inside strings, are no repeat', async () => {
      const raw =
        '{"key":"dk:ok","handler":"log","delay":"1h","payload":{"key":"k","lines":[{"sku":1},{"sku":2}],"note":"{\\"key\\":1,\\"key\\":2}"}}';
      const reply = await api<Timer>('POST', '/v1/timers', undefined, { raw });
      expect(reply.status).toBe(201);
      expect(reply.body.payload).toEqual({
        key: 'k',
        lines: [{ sku: 1 }, { sku: 2 }],
        note: '{"key":1,"key":2}',
      });
    });
  });

  describe('an integer beyond what a JSON number keeps exactly (±(2^53 − 1))', () => {
    it('in the payload (a snowflake id): 400 on its path saying to send a string, nothing written', async () => {
      const raw =
        '{"key":"big:1","handler":"log","delay":"1h","payload":{"order":{"id":12345678901234567890}}}';
      expect(await refusedRaw('POST', '/v1/timers', raw)).toEqual({
        reason: 'invalid',
        field: 'payload.order.id',
        message:
          'payload.order.id 12345678901234567890 would be kept as 12345678901234567000: JSON numbers are read as doubles, exact for integers up to ±9007199254740991',
        fix: 'Send it as a string ("12345678901234567890"), or as a number within ±9007199254740991.',
      });
      expect(
        await refusedRaw('POST', '/v1/preview', raw.replace('{"id"', '{"ids":[1,-9007199254740993],"id"')),
      ).toMatchObject({
        field: 'payload.order.ids[1]',
      });
    });

    it('integers a double holds (what JSON.stringify writes of one too), decimals and exponents are kept as sent', async () => {
      const raw =
        '{"key":"big:ok","handler":"log","delay":"1h","payload":{"max":9007199254740991,"min":-9007199254740991,"x":1.5e300,"y":0.1,"js":123456789012345680000,"e":1000000000000000000000}}';
      const reply = await api<Timer>('POST', '/v1/timers', undefined, { raw });
      expect([reply.status, reply.body.payload]).toEqual([
        201,
        {
          max: 9007199254740991,
          min: -9007199254740991,
          x: 1.5e300,
          y: 0.1,
          js: 123456789012345680000,
          e: 1e21,
        },
      ]);
    });
  });

  describe('a charset label that names UTF-8', () => {
    it.each(['utf8', 'UTF8', '"utf8"', 'unicode-1-1-utf-8'])(
      'charset=%s is UTF-8 (WHATWG labels), read as such: 201, not 415 "send UTF-8"',
      async (label) => {
        const key = `cs8:${Buffer.from(label).toString('hex')}`;
        const reply = await api<Timer>('POST', '/v1/timers', undefined, {
          raw: JSON.stringify({ key, handler: 'log', delay: '1h', payload: { note: 'café ✓' } }),
          headers: { 'content-type': `application/json; charset=${label}` },
        });
        expect([reply.status, reply.body.payload]).toEqual([201, { note: 'café ✓' }]);
      },
    );
  });

  describe('a Content-Encoding', () => {
    const raw = JSON.stringify({ key: 'ce:1', handler: 'log', delay: '1h' });
    const fix =
      'Send the body uncompressed (no Content-Encoding), or compressed as its Content-Encoding says: gzip, deflate, br or zstd.';

    it('one the parser does not take: 415 on Content-Encoding saying which it takes, not a charset fix', async () => {
      const before = (await app.raw.keys('*')).sort();
      const reply = await api<ErrorBody>('POST', '/v1/timers', undefined, {
        raw,
        headers: { 'content-encoding': 'compress' },
      });
      expect([reply.status, reply.body.error]).toEqual([
        415,
        {
          reason: 'invalid',
          field: 'Content-Encoding',
          message: 'unsupported content encoding "compress"',
          fix,
        },
      ]);
      expect((await app.raw.keys('*')).sort()).toEqual(before);
    });

    it('a body that is not what its Content-Encoding says: 400 on Content-Encoding, not "send JSON"', async () => {
      const reply = await api<ErrorBody>('POST', '/v1/timers', undefined, {
        raw,
        headers: { 'content-encoding': 'gzip' },
      });
      expect(reply.status).toBe(400);
      expect(reply.body.error).toMatchObject({ reason: 'invalid', field: 'Content-Encoding', fix });
      expect(reply.body.error.message).toMatch(
        /^the body is not gzip data as its Content-Encoding says \(.+\)$/,
      );
      expect((await api('GET', keyPath('ce:1'))).status).toBe(404);
    });

    it('a gzip body is read', async () => {
      const reply = await fetch(`${app.url}/v1/timers`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
        body: gzipSync(raw),
      });
      expect(reply.status).toBe(201);
    });
  });

  describe('dueBefore', () => {
    const bad = (text: string) => `/v1/timers?dueBefore=${encodeURIComponent(text)}`;

    it.each(['hello 2', '-1', '12/25', '5 Dec', 'x 2030-01-01', '2030-02-30T00:00:00Z'])(
      '%j, which Date.parse made an instant of: 400 invalid on dueBefore',
      async (text) => {
        const error = (await api<ErrorBody>('GET', bad(text))).body.error;
        expect(error).toMatchObject({ reason: 'invalid', field: 'dueBefore' });
        expect(error.message).toContain(JSON.stringify(text));
      },
    );

    it('an ISO time without its zone: 400 saying so (it names a wall time, not an instant)', async () => {
      expect((await api<ErrorBody>('GET', bad('2030-01-01T00:00:00'))).body.error).toEqual({
        reason: 'invalid',
        field: 'dueBefore',
        message:
          'dueBefore "2030-01-01T00:00:00" has no zone offset, so it names a wall time rather than an instant',
        fix: 'Append "Z" for UTC or an offset such as "-05:00", e.g. "2030-01-01T00:00:00Z".',
      });
    });

    it('epoch ms and ISO instants with Z or an offset list what is due by then', async () => {
      const at = Date.parse('2029-06-01T12:00:00Z');
      await api('POST', '/v1/timers', { key: 'db:1', handler: 'log', at });
      for (const [text, keys] of [
        [String(at), ['db:1']],
        ['2029-06-01T12:00:00Z', ['db:1']],
        ['2029-06-01T13:00:00+01:00', ['db:1']],
        ['2029-06-01T12:00:00+01:00', []],
      ] as const) {
        const reply = await api<ListResult>('GET', `${bad(text)}&prefix=db:`);
        expect([text, reply.body.items.map((timer) => timer.key)]).toEqual([text, keys]);
      }
    });
  });
});

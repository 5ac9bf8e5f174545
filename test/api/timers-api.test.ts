import type { Timer } from '@sundial/core';
import { type ErrorBody, keyPath } from '@sundial/testing/harness';
import { MAX_PAYLOAD, useCluster } from './cluster-fixture';

/** docs/spec.md §2 and §5.2 over HTTP: refusals, ifExists and Idempotency-Key, on a real scheduler and worker. */
describe('HTTP API: refusals, ifExists, Idempotency-Key', () => {
  const { api, getTimer } = useCluster();

  describe('refusals: reason, field, message, fix, HTTP code of docs/spec.md §2, nothing changed', () => {
    const base = { key: 'val:1', handler: 'record' };
    // Every row has 5 cells: jest passes `done` to a test function with more parameters than cells.
    const refusals: [string, unknown, number, string, string | undefined][] = [
      ['none of delay/at/every/cron', base, 400, 'invalid', undefined],
      ['two of delay/at/every/cron', { ...base, delay: 10, every: 1000 }, 400, 'invalid', undefined],
      ['cron without tz', { ...base, cron: '0 7 * * *' }, 400, 'invalid', 'tz'],
      ['an unknown zone', { ...base, cron: '0 7 * * *', tz: 'Mars/Olympus' }, 400, 'invalid', 'tz'],
      ['a cron that does not parse', { ...base, cron: '61 * * * *', tz: 'UTC' }, 400, 'invalid', 'cron'],
      ['a cron that never occurs', { ...base, cron: '0 0 30 2 *', tz: 'UTC' }, 400, 'invalid', 'cron'],
      ['a negative delay', { ...base, delay: -5 }, 400, 'invalid', 'delay'],
      ['a zero every', { ...base, every: 0 }, 400, 'invalid', 'every'],
      ['every below SUNDIAL_MIN_EVERY_MS', { ...base, every: 50 }, 400, 'invalid', 'every'],
      ['an ISO at without zone', { ...base, at: '2030-01-01T10:00:00' }, 400, 'invalid', 'at'],
      [
        'a maxRuns that is not a positive integer',
        { ...base, every: '1s', maxRuns: 1.5 },
        400,
        'invalid',
        'maxRuns',
      ],
      ['a timeout over 365 days', { ...base, delay: 10, timeout: '400d' }, 400, 'invalid', 'timeout'],
      ['a bad key', { ...base, key: 'has space', delay: 10 }, 400, 'invalid', 'key'],
      ['a bad handler name', { ...base, handler: '', delay: 10 }, 400, 'invalid', 'handler'],
      ['a batch whose spec has no schedule', [base], 400, 'invalid', 'specs[0]'],
      [
        'a payload over the limit',
        { ...base, delay: 10, payload: 'x'.repeat(MAX_PAYLOAD + 1) },
        413,
        'payload-too-large',
        'payload',
      ],
    ];

    it.each(refusals)('%s', async (_name, body, status, reason, field) => {
      const reply = await api<ErrorBody>('POST', '/v1/timers', body);
      expect(reply.status).toBe(status);
      expect(reply.body.error).toMatchObject({
        reason,
        message: expect.any(String),
        fix: expect.any(String),
      });
      if (field) expect(reply.body.error.field).toBe(field);
      expect((await api('GET', keyPath('val:1'))).status).toBe(404);
    });

    it("a limit's refusal names the scheduler's environment variable, not a library option", async () => {
      const payload = await api<ErrorBody>('POST', '/v1/timers', {
        ...base,
        delay: 10,
        payload: 'x'.repeat(MAX_PAYLOAD + 1),
      });
      const every = await api<ErrorBody>('POST', '/v1/timers', { ...base, every: 50 });
      expect([payload.body.error.fix, every.body.error.fix]).toEqual([
        expect.stringMatching(/or raise SUNDIAL_MAX_PAYLOAD_BYTES\.$/),
        expect.stringMatching(/the minimum is set by SUNDIAL_MIN_EVERY_MS\.$/),
      ]);
    });

    it('a body that is not JSON: 400 invalid', async () => {
      const reply = await api<ErrorBody>('POST', '/v1/timers', undefined, {
        raw: '{"key": "val:1", handler',
      });
      expect(reply).toMatchObject({ status: 400, body: { error: { reason: 'invalid' } } });
    });

    it('a body over the size limit: 413 before it is parsed (invalid JSON that large is not reported as 400)', async () => {
      const raw = `{"key":"val:1","handler":"record","delay":10,"payload":"${'x'.repeat(64 * 1024)}`;
      const reply = await api<ErrorBody>('POST', '/v1/timers', undefined, { raw });
      expect(reply).toMatchObject({ status: 413, body: { error: { reason: 'payload-too-large' } } });
    });

    it('not-found: 404 for get, cancel, reschedule, pause, resume, trigger of an unknown key', async () => {
      const calls: [string, string, unknown?][] = [
        ['GET', keyPath('nope:1')],
        ['DELETE', keyPath('nope:1')],
        ['POST', `${keyPath('nope:1')}/reschedule`, { delay: 10 }],
        ['POST', `${keyPath('nope:1')}/pause`],
        ['POST', `${keyPath('nope:1')}/resume`],
        ['POST', `${keyPath('nope:1')}/trigger`],
      ];
      for (const [method, path, body] of calls) {
        const reply = await api<ErrorBody>(method, path, body);
        expect({ call: `${method} ${path}`, status: reply.status, reason: reply.body.error?.reason }).toEqual(
          {
            call: `${method} ${path}`,
            status: 404,
            reason: 'not-found',
          },
        );
      }
    });
  });

  describe('ifExists', () => {
    const spec = { key: 'dup:1', handler: 'record', delay: '1h' };

    it('error (default): 409 duplicate-key while the key is live, the first timer untouched', async () => {
      const first = await api<Timer>('POST', '/v1/timers', spec);
      expect(first.status).toBe(201);
      expect(first.body).toMatchObject({ key: 'dup:1', version: 1, status: 'pending', kind: 'once' });
      const second = await api<ErrorBody>('POST', '/v1/timers', { ...spec, delay: '2h' });
      expect(second).toMatchObject({
        status: 409,
        body: { error: { reason: 'duplicate-key', field: 'key' } },
      });
      expect(await getTimer('dup:1')).toMatchObject({
        id: first.body.id,
        version: 1,
        dueAt: first.body.dueAt,
      });
    });

    it('keep: returns the recorded timer unchanged (the first call names the time)', async () => {
      const before = await getTimer('dup:1');
      const kept = await api<Timer>('POST', '/v1/timers', { ...spec, delay: '5h', ifExists: 'keep' });
      expect(kept.body).toMatchObject({ id: before.id, version: before.version, dueAt: before.dueAt });
    });

    it('replace: a new id; the old id is no longer live', async () => {
      const before = await getTimer('dup:1');
      const replaced = await api<Timer>('POST', '/v1/timers', { ...spec, delay: '3h', ifExists: 'replace' });
      expect(replaced.status).toBe(201);
      expect(replaced.body.id).not.toBe(before.id);
      expect(replaced.body.dueAt).toBeGreaterThan(before.dueAt);
      expect((await api('GET', `/v1/registry/${before.id}`)).body).toEqual({ id: before.id, live: false });
      expect((await api('GET', `/v1/registry/${replaced.body.id}`)).body).toEqual({
        id: replaced.body.id,
        live: true,
      });
    });

    it('a cancelled name stays cancelled for keep', async () => {
      expect(await api('DELETE', keyPath('dup:1'))).toMatchObject({ status: 200, body: { cancelled: true } });
      const kept = await api<Timer>('POST', '/v1/timers', { ...spec, ifExists: 'keep' });
      expect(kept.body.status).toBe('cancelled');
      expect((await api('GET', keyPath('dup:1'))).status).toBe(404);
      expect((await api('DELETE', keyPath('dup:1'))).status).toBe(404);
    });

    it('PUT creates (201) then replaces (200) under the URL-encoded key', async () => {
      const key = 'user/42@example.com:remind';
      const created = await api<Timer>('PUT', keyPath(key), { handler: 'record', delay: '1h' });
      expect(created).toMatchObject({ status: 201, body: { key, version: 1 } });
      const replaced = await api<Timer>('PUT', keyPath(key), { handler: 'record', delay: '2h' });
      expect(replaced.status).toBe(200);
      expect(replaced.body.id).not.toBe(created.body.id);
      expect(await getTimer(key)).toMatchObject({ id: replaced.body.id });
      const mismatch = await api<ErrorBody>('PUT', keyPath(key), {
        key: 'other',
        handler: 'record',
        delay: 10,
      });
      expect(mismatch).toMatchObject({ status: 400, body: { error: { reason: 'invalid', field: 'key' } } });
    });
  });

  describe('Idempotency-Key', () => {
    const keyed = (value: string) => ({ headers: { 'Idempotency-Key': value } });

    it('POST retried with the same key and body: the same timer and status, not 409', async () => {
      const spec = { key: 'idem:post', handler: 'record', delay: '1h' };
      const first = await api<Timer>('POST', '/v1/timers', spec, keyed('k-post'));
      expect(first.status).toBe(201);
      expect(await api<Timer>('POST', '/v1/timers', spec, keyed('k-post'))).toEqual(first);
      expect((await api<ErrorBody>('POST', '/v1/timers', spec)).status).toBe(409);
    });

    it('the same key with another body: 422 idempotency-conflict, nothing written', async () => {
      await api('POST', '/v1/timers', { key: 'idem:a', handler: 'record', delay: '1h' }, keyed('k-conflict'));
      const other = await api<ErrorBody>(
        'POST',
        '/v1/timers',
        { key: 'idem:b', handler: 'record', delay: '1h' },
        keyed('k-conflict'),
      );
      expect(other).toMatchObject({ status: 422, body: { error: { reason: 'idempotency-conflict' } } });
      expect((await api('GET', keyPath('idem:b'))).status).toBe(404);
    });

    it('PUT, DELETE, reschedule, pause, resume and trigger retried: the first answers', async () => {
      const key = 'idem:put';
      const created = await api<Timer>('PUT', keyPath(key), { handler: 'record', delay: '1h' }, keyed('p1'));
      expect(await api<Timer>('PUT', keyPath(key), { handler: 'record', delay: '1h' }, keyed('p1'))).toEqual(
        created,
      );
      const replaced = await api<Timer>('PUT', keyPath(key), { handler: 'record', delay: '2h' }, keyed('p2'));
      expect(replaced.status).toBe(200);
      expect(await api<Timer>('PUT', keyPath(key), { handler: 'record', delay: '2h' }, keyed('p2'))).toEqual(
        replaced,
      );
      for (const [path, body, id] of [
        [`${keyPath(key)}/reschedule`, { delay: '3h' }, 'r'],
        [`${keyPath(key)}/pause`, undefined, 'pa'],
        [`${keyPath(key)}/resume`, undefined, 're'],
        [`${keyPath(key)}/trigger`, undefined, 'tr'],
      ] as const) {
        const first = await api<Timer>('POST', path, body, keyed(id));
        expect(first.status).toBe(200);
        expect(await api<Timer>('POST', path, body, keyed(id))).toEqual(first);
      }
      const cancelled = await api('DELETE', keyPath(key), undefined, keyed('d'));
      expect(cancelled.status).toBe(200);
      expect(await api('DELETE', keyPath(key), undefined, keyed('d'))).toEqual(cancelled);
    });

    it('a malformed key is refused 400 naming the header; the OpenAPI document names the header', async () => {
      const bad = await api<ErrorBody>('DELETE', keyPath('idem:none'), undefined, keyed('has space'));
      expect(bad).toMatchObject({
        status: 400,
        body: { error: { reason: 'invalid', field: 'Idempotency-Key' } },
      });
      const document = await api<{
        paths: Record<string, Record<string, { parameters?: { name: string }[] }>>;
      }>('GET', '/docs-json');
      const headers = (path: string, method: string) =>
        document.body.paths[path][method].parameters?.map((parameter) => parameter.name);
      expect(headers('/v1/timers', 'post')).toContain('Idempotency-Key');
      expect(headers('/v1/timers/{key}/pause', 'post')).toContain('Idempotency-Key');
    });
  });
});

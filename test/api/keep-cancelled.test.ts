import type { Timer } from '@sundial/core';
import { keyPath } from '@sundial/testing/harness';
import { contractChecker, type OpenApiDocument } from './openapi-contract';
import { useScheduler } from './scheduler-fixture';

/**
 * docs/spec.md §3.1, §5.2: `POST /v1/timers` with `ifExists: 'keep'` on a key cancelled within its
 * tombstone answers the cancelled timer and creates nothing — 200 without `Location`. It answered 201
 * Created with a `Location` whose GET is 404: a creation that did not happen.
 */
describe('HTTP API: keep on a cancelled key', () => {
  const scheduler = useScheduler();
  const { api } = scheduler;
  /** POST /v1/timers: the status, the body and the Location header (the fixture's client drops headers). */
  const fetchPost = async (body: object, headers: Record<string, string> = {}) => {
    const reply = await fetch(`${scheduler.url}/v1/timers`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    return {
      status: reply.status,
      body: (await reply.json()) as Timer,
      location: reply.headers.get('location'),
    };
  };
  const spec = { key: 'tomb:1', handler: 'record', delay: '1h' };

  it('answers 200 with the cancelled timer, no Location; a retry with its Idempotency-Key alike', async () => {
    const created = await api<Timer>('POST', '/v1/timers', spec);
    expect(created.status).toBe(201);
    expect((await api('DELETE', keyPath('tomb:1'))).status).toBe(200);
    const headers = { 'idempotency-key': 'keep-1' };
    for (let call = 0; call < 2; call++) {
      const kept = await fetchPost({ ...spec, ifExists: 'keep' }, headers);
      expect(kept.status).toBe(200);
      expect(kept.location).toBeNull();
      expect(kept.body).toMatchObject({ id: created.body.id, status: 'cancelled', version: 2 });
    }
    // nothing was created: the key still has no timer to read
    expect((await api('GET', keyPath('tomb:1'))).status).toBe(404);
    // the answer is one /docs-json documents
    const check = contractChecker((await api<OpenApiDocument>('GET', '/docs-json')).body);
    const kept = await fetchPost({ ...spec, ifExists: 'keep' });
    expect(check('post /v1/timers', { ...kept, contentType: 'application/json' })).toEqual([]);
    // a create or replace schedules it again: 201 with its Location
    const again = await api<Timer>('POST', '/v1/timers', { ...spec, ifExists: 'replace' });
    expect(again).toMatchObject({ status: 201, body: { status: 'pending' } });
  });
});

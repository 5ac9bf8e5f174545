import type { Timer } from '@sundial/core';
import { keyPath } from '@sundial/testing/harness';
import { useScheduler } from './scheduler-fixture';

/**
 * docs/spec.md §5.2: `PUT /v1/timers/:key` retried with its `Idempotency-Key` answers as its first try —
 * 201 or 200 alike — and changes nothing more, whatever the key holds by then. PUT is two calls (a
 * create, then on `duplicate-key` a replace), and a refused create is not remembered: a retry after the
 * replaced timer was cancelled created a new timer and answered 201.
 */
describe('HTTP API: PUT retried with its Idempotency-Key', () => {
  const scheduler = useScheduler();
  const { api } = scheduler;
  /** PUT with the key: the status, the body and the Location header (the fixture's client drops headers). */
  const put = async (key: string, body: object, idempotencyKey: string) => {
    const reply = await fetch(`${scheduler.url}${keyPath(key)}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
      body: JSON.stringify(body),
    });
    return {
      status: reply.status,
      body: (await reply.json()) as Timer,
      location: reply.headers.get('location'),
    };
  };
  const spec = { handler: 'log', delay: '1h' };

  it('a replace (200), its timer cancelled: the retry answers 200 with that timer and creates none', async () => {
    expect((await api('PUT', keyPath('pr:replaced'), spec)).status).toBe(201);
    const replaced = await put('pr:replaced', { ...spec, delay: '2h' }, 'put-replace');
    expect([replaced.status, replaced.location]).toEqual([200, null]);
    expect((await api('DELETE', keyPath('pr:replaced'))).body).toEqual({ cancelled: true });
    const retried = await put('pr:replaced', { ...spec, delay: '2h' }, 'put-replace');
    expect(retried).toEqual(replaced);
    expect((await api('GET', keyPath('pr:replaced'))).status).toBe(404);
    // and again: the same answer, still nothing under the key
    expect(await put('pr:replaced', { ...spec, delay: '2h' }, 'put-replace')).toEqual(replaced);
    expect((await api('GET', keyPath('pr:replaced'))).status).toBe(404);
  });

  it('a create (201), the key cancelled and scheduled again: the retry answers 201 and changes nothing', async () => {
    const created = await put('pr:created', spec, 'put-create');
    expect([created.status, created.location]).toEqual([201, keyPath('pr:created')]);
    expect((await api('DELETE', keyPath('pr:created'))).status).toBe(200);
    const other = await api<Timer>('POST', '/v1/timers', { ...spec, key: 'pr:created', delay: '3h' });
    expect(other.status).toBe(201);
    expect(await put('pr:created', spec, 'put-create')).toEqual(created);
    expect((await api('GET', keyPath('pr:created'))).body).toEqual(other.body);
  });

  it('a replace retried while its timer is live: 200 with that timer, the timer unchanged', async () => {
    expect((await api('PUT', keyPath('pr:live'), spec)).status).toBe(201);
    const replaced = await put('pr:live', { handler: 'log', every: '1h' }, 'put-live');
    expect(replaced.status).toBe(200);
    expect(await put('pr:live', { handler: 'log', every: '1h' }, 'put-live')).toEqual(replaced);
    expect((await api('GET', keyPath('pr:live'))).body).toEqual(replaced.body);
  });
});

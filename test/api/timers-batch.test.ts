import type { Timer } from '@sundial/core';
import { type ErrorBody, keyPath, waitFor } from '@sundial/testing/harness';
import { MAX_PAYLOAD, useCluster } from './cluster-fixture';
import { contractChecker, type OpenApiDocument } from './openapi-contract';

type Batch = { items: Timer[] };

/**
 * docs/spec.md §5.2: POST /v1/timers with a JSON array of specs is scheduleMany over HTTP (§3.1) — all or
 * none, a refusal naming its spec, an Idempotency-Key replayed as one request — on a real scheduler and worker.
 */
describe('HTTP API: a batch of specs', () => {
  const { api, runs } = useCluster();
  const statuses = async (keys: string[]) =>
    Promise.all(keys.map(async (key) => (await api('GET', keyPath(key))).status));

  it('schedules every spec, answers 200 { items } in the body order, as /docs-json says, and runs them', async () => {
    const specs = [
      { key: 'b:once', handler: 'record', delay: 50, payload: { n: 1 } },
      { key: 'b:every', handler: 'record', every: '1h' },
      { key: 'b:cron', handler: 'record', cron: '0 7 * * 1-5', tz: 'America/Toronto' },
    ];
    const reply = await api<Batch>('POST', '/v1/timers', specs);
    expect(reply.status).toBe(200);
    expect(reply.body.items.map((timer) => [timer.key, timer.kind, timer.version])).toEqual([
      ['b:once', 'once', 1],
      ['b:every', 'interval', 1],
      ['b:cron', 'cron', 1],
    ]);
    for (const timer of reply.body.items.slice(1)) {
      expect((await api<Timer>('GET', keyPath(timer.key))).body).toEqual(timer);
    }
    const document = (await api<OpenApiDocument>('GET', '/docs-json')).body;
    const answer = { status: 200, body: reply.body, contentType: 'application/json' };
    expect(contractChecker(document)('post /v1/timers', answer)).toEqual([]);
    const run = await waitFor(() => runs.find((ctx) => ctx.key === 'b:once'));
    expect(run).toMatchObject({ id: reply.body.items[0].id, version: 1, payload: { n: 1 } });
  });

  it.each<[string, unknown[], number, string, string, RegExp]>([
    [
      'a spec that cannot be scheduled',
      [
        { key: 'b:r1', handler: 'record', delay: 10 },
        { key: 'b:r2', handler: 'record', delay: -1 },
      ],
      400,
      'invalid',
      'specs[1].delay',
      /^specs\[1\]: delay -1 is negative/,
    ],
    [
      'a key named twice with ifExists error',
      [
        { key: 'b:r1', handler: 'record', delay: 10 },
        { key: 'b:r1', handler: 'record', delay: 20 },
      ],
      409,
      'duplicate-key',
      'specs[1].key',
      /^specs\[1\]: /,
    ],
    [
      'a spec that is not an object',
      [{ key: 'b:r1', handler: 'record', delay: 10 }, 'b:r2'],
      400,
      'invalid',
      'specs[1]',
      /^specs\[1\]: the timer spec must be a JSON object/,
    ],
    [
      "another scheduler's field name",
      [{ key: 'b:r1', handler: 'record', delay: 10, data: { n: 1 } }],
      400,
      'invalid',
      'specs[0].data',
      /^specs\[0\]: the timer spec has an unknown field "data"/,
    ],
  ])(
    'refuses a batch with %s, naming the spec, and writes none of it',
    async (_name, specs, status, reason, field, message) => {
      const reply = await api<ErrorBody>('POST', '/v1/timers', specs);
      expect(reply.status).toBe(status);
      expect(reply.body.error).toMatchObject({ reason, field, fix: expect.any(String) });
      expect(reply.body.error.message).toMatch(message);
      expect(await statuses(['b:r1', 'b:r2'])).toEqual([404, 404]);
    },
  );

  it('refuses the whole batch at a live key, leaving the live timer and writing no other', async () => {
    const live = await api<Timer>('POST', '/v1/timers', { key: 'b:live', handler: 'record', delay: '1h' });
    const specs = [
      { key: 'b:new', handler: 'record', delay: '1h' },
      { key: 'b:live', handler: 'record', delay: '2h' },
    ];
    const reply = await api<ErrorBody>('POST', '/v1/timers', specs);
    expect([reply.status, reply.body.error.reason, reply.body.error.field]).toEqual([
      409,
      'duplicate-key',
      'specs[1].key',
    ]);
    expect(await statuses(['b:new'])).toEqual([404]);
    expect((await api<Timer>('GET', keyPath('b:live'))).body).toEqual(live.body);
  });

  it('answers a retried batch as the first time under its Idempotency-Key, and refuses other specs under it', async () => {
    const specs = [
      { key: 'b:i1', handler: 'record', delay: '1h' },
      { key: 'b:i2', handler: 'record', delay: '1h', ifExists: 'replace' },
    ];
    const headers = { headers: { 'idempotency-key': 'batch-retry-1' } };
    const first = await api<Batch>('POST', '/v1/timers', specs, headers);
    const again = await api<Batch>('POST', '/v1/timers', specs, headers);
    expect([first.status, again.status]).toEqual([200, 200]);
    expect(again.body).toEqual(first.body);
    expect((await api<Timer>('GET', keyPath('b:i2'))).body.version).toBe(1);
    const other = await api<ErrorBody>('POST', '/v1/timers', specs.slice(0, 1), headers);
    expect([other.status, other.body.error.reason]).toEqual([422, 'idempotency-conflict']);
    const single = await api<ErrorBody>('POST', '/v1/timers', specs[0], headers);
    expect([single.status, single.body.error.reason]).toEqual([422, 'idempotency-conflict']);
  });

  it('answers an empty batch with no items, and holds a batch to the one body limit', async () => {
    expect(await api<Batch>('POST', '/v1/timers', [])).toMatchObject({ status: 200, body: { items: [] } });
    const payload = 'x'.repeat(MAX_PAYLOAD / 2);
    const many = Array.from({ length: 40 }, (_, n) => ({
      key: `b:big${n}`,
      handler: 'record',
      delay: '1h',
      payload,
    }));
    const reply = await api<ErrorBody>('POST', '/v1/timers', many);
    expect([reply.status, reply.body.error.reason]).toEqual([413, 'payload-too-large']);
    expect(reply.body.error.fix).toMatch(/split it into smaller batches/);
    expect(await statuses(['b:big0', 'b:big39'])).toEqual([404, 404]);
  });
});

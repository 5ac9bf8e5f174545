import type { Timer } from '@sundial/core';
import { type ErrorBody, type HttpClient, keyPath, waitFor } from '@sundial/testing/harness';
import { useBackendScheduler } from './backend-scheduler';

/**
 * docs/spec.md §5.2: one `Idempotency-Key` names one request — "the same key with another request is 422
 * `idempotency-conflict`" — whichever routes the two requests take. PUT makes its calls under request ids
 * derived from the header (`create:` / `replace:`), so before, nothing it did met the record of a POST (or
 * of any other route) sent with the same header, nor the other way round: the second request was applied.
 * On the scheduler over Redis, and over the in-memory engine (the library's other backend), alike.
 */
const HOUR = 3_600_000;

describe.each(['redis', 'engine'] as const)('%s: one Idempotency-Key across routes', (backend) => {
  const scheduler = useBackendScheduler(backend);
  const api = ((...args: Parameters<HttpClient>) => scheduler.api(...args)) as HttpClient;

  const keyed = (idempotencyKey: string) => ({ headers: { 'Idempotency-Key': idempotencyKey } });
  const spec = { handler: 'log', delay: '1h' };
  /** the second request refused 422 idempotency-conflict on the header, naming the key as sent */
  const expectConflict = (reply: { status: number; body: unknown }, idempotencyKey: string) => {
    expect(reply).toMatchObject({
      status: 422,
      body: { error: { reason: 'idempotency-conflict', field: 'Idempotency-Key' } },
    });
    expect((reply.body as ErrorBody).error.message).toContain(JSON.stringify(idempotencyKey));
  };

  it('POST then PUT with the same key: 422, the timer unchanged and no other created', async () => {
    const posted = await api<Timer>('POST', '/v1/timers', { ...spec, key: 'ik:post-put' }, keyed('post-put'));
    expect(posted.status).toBe(201);
    // the same timer's key (PUT would replace it) and another key (PUT would create it)
    expectConflict(
      await api('PUT', keyPath('ik:post-put'), { ...spec, delay: '2h' }, keyed('post-put')),
      'post-put',
    );
    expectConflict(await api('PUT', keyPath('ik:post-put:2'), spec, keyed('post-put')), 'post-put');
    expect((await api('GET', keyPath('ik:post-put'))).body).toEqual(posted.body);
    expect((await api('GET', keyPath('ik:post-put:2'))).status).toBe(404);
    // the POST retried still answers as it did
    expect(await api('POST', '/v1/timers', { ...spec, key: 'ik:post-put' }, keyed('post-put'))).toEqual(
      posted,
    );
  });

  it('PUT then POST with the same key: 422, nothing created or replaced; the PUT retried answers 201', async () => {
    const put = await api<Timer>('PUT', keyPath('ik:put-post'), spec, keyed('put-post'));
    expect(put.status).toBe(201);
    const other = { ...spec, key: 'ik:put-post:2' };
    expectConflict(await api('POST', '/v1/timers', other, keyed('put-post')), 'put-post');
    const replace = { ...spec, key: 'ik:put-post', delay: '2h', ifExists: 'replace' };
    expectConflict(await api('POST', '/v1/timers', replace, keyed('put-post')), 'put-post');
    expect((await api('GET', keyPath('ik:put-post:2'))).status).toBe(404);
    expect((await api('GET', keyPath('ik:put-post'))).body).toEqual(put.body);
    expect(await api('PUT', keyPath('ik:put-post'), spec, keyed('put-post'))).toEqual(put);
    // the body's key and ifExists said or not, as before: the same request
    const same = { ...spec, key: 'ik:put-post', ifExists: 'replace' };
    expect(await api('PUT', keyPath('ik:put-post'), same, keyed('put-post'))).toEqual(put);
  });

  it('a PUT that replaced (200), then a PUT of another key with the same key: 422, nothing created', async () => {
    expect((await api('PUT', keyPath('ik:put-put'), spec)).status).toBe(201);
    const replaced = await api<Timer>(
      'PUT',
      keyPath('ik:put-put'),
      { ...spec, delay: '2h' },
      keyed('put-put'),
    );
    expect(replaced.status).toBe(200);
    expectConflict(await api('PUT', keyPath('ik:put-put:2'), spec, keyed('put-put')), 'put-put');
    expect((await api('GET', keyPath('ik:put-put:2'))).status).toBe(404);
    expect(await api('PUT', keyPath('ik:put-put'), { ...spec, delay: '2h' }, keyed('put-put'))).toEqual(
      replaced,
    );
  });

  /** Each state-changing route, on the live interval timer `key` (whose scope is `scope`), as [method, path, body]. */
  const routes: Record<string, (key: string, scope: string) => [string, string, unknown?]> = {
    post: (key) => ['POST', '/v1/timers', { key, handler: 'log', every: '2h', ifExists: 'replace' }],
    put: (key) => ['PUT', keyPath(key), { handler: 'log', every: '3h' }],
    delete: (key) => ['DELETE', keyPath(key)],
    'delete by prefix': (_key, scope) => ['DELETE', `/v1/timers?prefix=${encodeURIComponent(scope)}`],
    reschedule: (key) => ['POST', `${keyPath(key)}/reschedule`, { delay: '5h' }],
    pause: (key) => ['POST', `${keyPath(key)}/pause`],
    resume: (key) => ['POST', `${keyPath(key)}/resume`],
    trigger: (key) => ['POST', `${keyPath(key)}/trigger`],
    backfill: (key) => {
      const now = Date.now();
      return ['POST', `${keyPath(key)}/backfill`, { from: now - 3 * HOUR, to: now - HOUR }];
    },
  };
  const pairs = Object.keys(routes).flatMap((first) =>
    Object.keys(routes)
      .filter((second) => second !== first)
      .map((second) => [first, second] as const),
  );

  it('every pair of routes sharing a key: the second request is refused 422 and changes nothing', async () => {
    const slipped: string[] = [];
    for (const [n, [first, second]] of pairs.entries()) {
      const scope = `ik:pair:${n}:`;
      const key = `${scope}t`;
      const idempotencyKey = `pair-${n}`;
      expect((await api('POST', '/v1/timers', { key, handler: 'log', every: '1h' })).status).toBe(201);
      const [method, path, body] = routes[first](key, scope);
      const answered = await api(method, path, body, keyed(idempotencyKey));
      expect([first, answered.status]).toEqual([first, expect.any(Number)]);
      if (answered.status >= 300)
        throw new Error(`${first} answered ${answered.status}: ${JSON.stringify(answered.body)}`);
      // on the engine the run a trigger or backfill starts begins a moment after its answer (and hangs)
      const started = backend === 'engine' && (first === 'trigger' || first === 'backfill');
      const before = await waitFor(
        async () => {
          const read = await api<Timer>('GET', keyPath(key));
          return (!started || read.body.status === 'running') && read;
        },
        { what: `${first}'s run started` }, // deadline: the default 10 s
      );
      const [method2, path2, body2] = routes[second](key, scope);
      const reply = await api<ErrorBody>(method2, path2, body2, keyed(idempotencyKey));
      const after = await api('GET', keyPath(key));
      if (reply.status !== 422 || reply.body.error.reason !== 'idempotency-conflict')
        slipped.push(`${first} then ${second}: ${reply.status}`);
      else expect([first, second, after]).toEqual([first, second, before]);
    }
    expect(slipped).toEqual([]);
  });
});

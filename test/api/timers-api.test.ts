import type { JsonValue, ListResult, Timer, TimerContext } from '@sundial/core';
import {
  type ErrorBody,
  type HttpClient,
  keyPath,
  type RedisServer,
  startRedis,
  waitFor,
} from '@sundial/testing';
import { type RunningApp, startScheduler, startWorker } from '../local-cluster';

/** An operation's JSON body as /docs-json describes it. */
type OpenApiBody = {
  requestBody: { content: Record<string, { schema: { properties: Record<string, unknown> } }> };
};

/** docs/spec.md §3 over the HTTP API of §5.2: a real scheduler and worker (in this process), one Redis. */
describe('HTTP API', () => {
  const MAX_PAYLOAD = 1024;
  let redis: RedisServer;
  let scheduler: RunningApp;
  let worker: RunningApp;
  let api: HttpClient;
  const runs: TimerContext[] = [];
  const releases = new Map<string, () => void>();

  const handlers = {
    record: (_payload: JsonValue, ctx: TimerContext) => {
      runs.push(ctx);
    },
    fail: () => {
      throw new Error('boom');
    },
    // Holds the timer `running` until the test releases it (or the run is aborted).
    block: (_payload: JsonValue, ctx: TimerContext) =>
      new Promise<void>((resolve) => {
        releases.set(ctx.key, resolve);
        ctx.signal.addEventListener('abort', () => resolve());
      }),
  };

  beforeAll(async () => {
    redis = await startRedis();
    [scheduler, worker] = await Promise.all([
      startScheduler(redis.url, { maxPayloadBytes: MAX_PAYLOAD }),
      startWorker(redis.url, handlers),
    ]);
    api = scheduler.api;
  });

  afterAll(async () => {
    for (const release of releases.values()) release();
    await Promise.all([scheduler?.close(), worker?.close()]);
    await redis?.stop();
  });

  const getTimer = async (key: string) => (await api<Timer>('GET', keyPath(key))).body;
  const statusOf = async (key: string) => {
    const reply = await api<Timer>('GET', keyPath(key));
    return reply.status === 404 ? 'gone' : reply.body.status;
  };

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
      ['a body that is an array', [base], 400, 'invalid', undefined],
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

  describe('runs', () => {
    it('a one-shot runs once; removeOnComplete: false keeps it with last, runCount, lastCompletedAt', async () => {
      const created = await api<Timer>('POST', '/v1/timers', {
        key: 'run:ok',
        handler: 'record',
        delay: 50,
        payload: { n: 1 },
        removeOnComplete: false,
      });
      const timer = await waitFor(async () => {
        const current = await getTimer('run:ok');
        return current.status === 'completed' && current;
      });
      expect(timer).toMatchObject({ runCount: 1, last: { status: 'ok' }, lastErrorAt: null });
      expect(timer.lastCompletedAt).toBeGreaterThanOrEqual(created.body.dueAt);
      const seen = runs.filter((run) => run.key === 'run:ok');
      expect(seen).toHaveLength(1);
      expect(seen[0]).toMatchObject({
        id: created.body.id,
        version: 1,
        payload: { n: 1 },
        due: created.body.dueAt,
      });
    });

    it('a failing one-shot is failed with the error on last', async () => {
      await api('POST', '/v1/timers', {
        key: 'run:fail',
        handler: 'fail',
        delay: 10,
        removeOnComplete: false,
      });
      const timer = await waitFor(async () => {
        const current = await getTimer('run:fail');
        return current.status === 'failed' && current;
      });
      expect(timer).toMatchObject({ runCount: 1, last: { status: 'failed', error: { message: 'boom' } } });
      expect(timer.lastErrorAt).toEqual(expect.any(Number));
    });

    it('a timeout in the body is returned in ms and bounds the run: failed with reason timeout', async () => {
      const created = await api<Timer>('POST', '/v1/timers', {
        key: 'run:timeout',
        handler: 'block',
        delay: 10,
        timeout: '200ms',
        removeOnComplete: false,
      });
      expect(created).toMatchObject({ status: 201, body: { timeout: 200 } });
      const timer = await waitFor(async () => {
        const current = await getTimer('run:timeout');
        return current.status === 'failed' && current;
      });
      expect(timer).toMatchObject({ timeout: 200, last: { status: 'failed', error: { reason: 'timeout' } } });
      const document = await api<{ paths: Record<string, Record<string, OpenApiBody>> }>('GET', '/docs-json');
      const body = document.body.paths['/v1/timers'].post.requestBody.content['application/json'].schema;
      expect(body.properties).toHaveProperty('timeout');
    });

    it('a one-shot with the default removeOnComplete leaves no row after its run', async () => {
      const created = await api<Timer>('POST', '/v1/timers', {
        key: 'run:gone',
        handler: 'record',
        delay: 10,
      });
      await waitFor(async () => (await statusOf('run:gone')) === 'gone');
      expect(runs.filter((run) => run.key === 'run:gone').map((run) => run.id)).toEqual([created.body.id]);
      expect((await api('GET', `/v1/registry/${created.body.id}`)).body).toMatchObject({ live: false });
    });

    it('an interval with maxRuns runs that many times on its grid, then completes', async () => {
      const created = await api<Timer>('POST', '/v1/timers', {
        key: 'run:every',
        handler: 'record',
        every: 100,
        maxRuns: 3,
        removeOnComplete: false,
      });
      const timer = await waitFor(async () => {
        const current = await getTimer('run:every');
        return current.status === 'completed' && current;
      });
      expect(timer.runCount).toBe(3);
      const seen = runs.filter((run) => run.key === 'run:every');
      expect(seen.map((run) => run.runCount)).toEqual([1, 2, 3]);
      for (const run of seen) expect((run.due - created.body.scheduledAt) % 100).toBe(0);
    });

    it('reschedule is refused with 409 inactive while the timer runs', async () => {
      await api('POST', '/v1/timers', {
        key: 'run:block',
        handler: 'block',
        delay: 10,
        removeOnComplete: false,
      });
      await waitFor(async () => (await statusOf('run:block')) === 'running' && releases.has('run:block'));
      const reply = await api<ErrorBody>('POST', `${keyPath('run:block')}/reschedule`, { delay: '1h' });
      expect(reply).toMatchObject({
        status: 409,
        body: { error: { reason: 'inactive', detail: { status: 'running' } } },
      });
      releases.get('run:block')?.();
      await waitFor(async () => (await statusOf('run:block')) === 'completed');
      expect((await getTimer('run:block')).runCount).toBe(1);
    });

    it('reschedule of a pending timer keeps the id and bumps the version', async () => {
      const created = await api<Timer>('POST', '/v1/timers', {
        key: 'move:1',
        handler: 'record',
        delay: '1h',
      });
      const moved = await api<Timer>('POST', `${keyPath('move:1')}/reschedule`, { delay: '2h' });
      expect(moved.status).toBe(200);
      expect(moved.body).toMatchObject({
        id: created.body.id,
        version: created.body.version + 1,
        status: 'pending',
      });
      expect(moved.body.dueAt).toBeGreaterThan(created.body.dueAt);
      const bad = await api<ErrorBody>('POST', `${keyPath('move:1')}/reschedule`, { delay: -1 });
      expect(bad).toMatchObject({ status: 400, body: { error: { reason: 'invalid' } } });
    });

    it('pause, resume and trigger', async () => {
      const created = await api<Timer>('POST', '/v1/timers', { key: 'pr:1', handler: 'record', every: '1h' });
      const paused = await api<Timer>('POST', `${keyPath('pr:1')}/pause`);
      expect(paused).toMatchObject({ status: 200, body: { status: 'paused' } });
      const resumed = await api<Timer>('POST', `${keyPath('pr:1')}/resume`);
      expect(resumed).toMatchObject({ status: 200, body: { status: 'pending', id: created.body.id } });
      const triggered = await api<Timer>('POST', `${keyPath('pr:1')}/trigger`);
      expect(triggered.status).toBe(200);
      await waitFor(() => runs.some((run) => run.key === 'pr:1'));
      const after = await waitFor(async () => {
        const current = await getTimer('pr:1');
        return current.runCount === 1 && current.status === 'pending' && current;
      });
      // out of band: the hourly schedule did not move
      expect(after.dueAt).toBe(resumed.body.dueAt);
    });

    it('backfill runs the slots of a past range, in order, and refuses a bad range with reason and fix', async () => {
      const created = await api<Timer>('POST', '/v1/timers', {
        key: 'bf:1',
        handler: 'record',
        every: '1h',
        catchup: 'all',
        jitter: '1m',
      });
      expect(created.body).toMatchObject({ catchup: 'all', jitter: 60_000 });
      const anchor = created.body.scheduledAt;
      const range = {
        from: new Date(anchor - 2 * 3_600_000).toISOString(),
        to: new Date(anchor - 1).toISOString(),
      };
      const done = await api('POST', `${keyPath('bf:1')}/backfill`, range);
      expect(done).toMatchObject({ status: 200, body: { key: 'bf:1', slots: 2 } });
      await waitFor(() => runs.filter((run) => run.key === 'bf:1').length === 2);
      const dues = runs.filter((run) => run.key === 'bf:1').map((run) => anchor - run.due);
      expect(dues).toEqual([2 * 3_600_000, 3_600_000]);
      const bad = await api<ErrorBody>('POST', `${keyPath('bf:1')}/backfill`, {
        from: range.to,
        to: range.from,
      });
      expect(bad).toMatchObject({ status: 400, body: { error: { reason: 'invalid', field: 'to' } } });
      expect(bad.body.error.fix).toMatch(/from before to/);
      const missing = await api<ErrorBody>('POST', `${keyPath('bf:none')}/backfill`, range);
      expect(missing).toMatchObject({ status: 404, body: { error: { reason: 'not-found' } } });
    });
  });

  describe('registry, list, cancelAll', () => {
    it('check and snapshot follow the live ids', async () => {
      const created = await api<Timer>('POST', '/v1/timers', {
        key: 'reg:1',
        handler: 'record',
        delay: '1h',
      });
      expect((await api<{ ids: string[] }>('GET', '/v1/registry')).body.ids).toContain(created.body.id);
      await api('DELETE', keyPath('reg:1'));
      expect((await api<{ ids: string[] }>('GET', '/v1/registry')).body.ids).not.toContain(created.body.id);
      expect((await api('GET', `/v1/registry/${created.body.id}`)).body).toEqual({
        id: created.body.id,
        live: false,
      });
    });

    it('lists by prefix and status, page by page with limit and cursor', async () => {
      for (let n = 1; n <= 5; n++)
        await api('POST', '/v1/timers', { key: `ls:${n}`, handler: 'record', delay: '1h' });
      await api('POST', `${keyPath('ls:3')}/pause`);
      const keys: string[] = [];
      let cursor = '';
      for (let page = 0; page < 10; page++) {
        const reply = await api<ListResult>(
          'GET',
          `/v1/timers?prefix=ls:&limit=2&cursor=${encodeURIComponent(cursor)}`,
        );
        expect(reply.body.items.length).toBeLessThanOrEqual(2);
        keys.push(...reply.body.items.map((timer) => timer.key));
        if (!reply.body.nextCursor) break;
        cursor = reply.body.nextCursor;
      }
      expect(keys.sort()).toEqual(['ls:1', 'ls:2', 'ls:3', 'ls:4', 'ls:5']);
      const paused = await api<ListResult>('GET', '/v1/timers?prefix=ls:&status=paused');
      expect(paused.body.items.map((timer) => timer.key)).toEqual(['ls:3']);
      expect((await api<ErrorBody>('GET', '/v1/timers?limit=zero')).body.error).toMatchObject({
        reason: 'invalid',
        field: 'limit',
      });
      expect((await api<ErrorBody>('GET', '/v1/timers?status=sleeping')).body.error).toMatchObject({
        reason: 'invalid',
        field: 'status',
      });
    });

    it('lists by due with dueBefore as an ISO instant or epoch ms; a bad one is refused', async () => {
      const now = Date.now();
      for (const [key, minutes] of [
        ['due:b', 20],
        ['due:a', 40],
        ['due:c', 90],
      ] as const)
        await api('POST', '/v1/timers', { key, handler: 'record', at: now + minutes * 60_000 });
      const hour = new Date(now + 3_600_000).toISOString();
      for (const dueBefore of [hour, String(now + 3_600_000)]) {
        const reply = await api<ListResult>('GET', `/v1/timers?prefix=due:&dueBefore=${dueBefore}`);
        expect(reply.body.items.map((timer) => timer.key)).toEqual(['due:b', 'due:a']);
      }
      expect((await api<ErrorBody>('GET', '/v1/timers?dueBefore=tomorrow')).body.error).toMatchObject({
        reason: 'invalid',
        field: 'dueBefore',
      });
    });

    it('cancelAll by scope returns the count and touches nothing outside the scope', async () => {
      for (const key of ['scope:a:1', 'scope:a:2', 'scope:a:3', 'scope:ab:1', 'scope:b:1']) {
        await api('POST', '/v1/timers', { key, handler: 'record', delay: '1h' });
      }
      expect(await api('DELETE', '/v1/timers?prefix=scope:a:')).toMatchObject({
        status: 200,
        body: { cancelled: 3 },
      });
      expect(await statusOf('scope:a:1')).toBe('gone');
      expect(await statusOf('scope:ab:1')).toBe('pending');
      expect(await statusOf('scope:b:1')).toBe('pending');
    });

    it.each([
      ['no prefix', '/v1/timers', 'prefix'],
      ['a bare ?prefix', '/v1/timers?prefix', 'prefix'],
      ['an empty prefix=', '/v1/timers?prefix=', 'prefix'],
      ['all other than true', '/v1/timers?all=1', 'all'],
      ['a prefix and all=true', '/v1/timers?prefix=scope:&all=true', 'prefix'],
    ])(
      '%s: 400 invalid, saying how to cancel all on purpose; nothing cancelled',
      async (_what, path, field) => {
        const live = (await api<{ ids: string[] }>('GET', '/v1/registry')).body.ids.length;
        expect(live).toBeGreaterThan(0);
        expect(await api<ErrorBody>('DELETE', path)).toMatchObject({
          status: 400,
          body: {
            error: {
              reason: 'invalid',
              field,
              fix: expect.stringContaining('?all=true to cancel every timer'),
            },
          },
        });
        expect((await api<{ ids: string[] }>('GET', '/v1/registry')).body.ids).toHaveLength(live);
      },
    );

    it('`all=true` cancels every timer', async () => {
      const live = (await api<{ ids: string[] }>('GET', '/v1/registry')).body.ids.length;
      expect(live).toBeGreaterThan(0);
      expect(await api('DELETE', '/v1/timers?all=true')).toMatchObject({
        status: 200,
        body: { cancelled: live },
      });
      expect((await api<{ ids: string[] }>('GET', '/v1/registry')).body.ids).toEqual([]);
    });
  });
});

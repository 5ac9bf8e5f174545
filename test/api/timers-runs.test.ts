import type { Timer } from '@sundial/core';
import { type ErrorBody, keyPath, waitFor } from '@sundial/testing/harness';
import { useCluster } from './cluster-fixture';

/** An operation's JSON body as /docs-json describes it. */
type SpecSchema = { properties: Record<string, unknown> };
/** POST /v1/timers takes one spec or a batch of them (docs/spec.md §5.2): `oneOf` the two. */
type OpenApiBody = {
  requestBody: { content: Record<string, { schema: { oneOf: [SpecSchema, { items: SpecSchema }] } }> };
};

/** docs/spec.md §3 over HTTP: runs, reschedule, pause, resume, trigger and backfill, on a real scheduler and worker. */
describe('HTTP API: runs', () => {
  const { api, runs, releases, getTimer, statusOf } = useCluster();

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
      expect(body.oneOf[0].properties).toHaveProperty('timeout');
      expect(body.oneOf[1].items.properties).toHaveProperty('timeout');
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
});

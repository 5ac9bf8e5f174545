import { SundialError } from '../errors';
import { harness, START } from './spec-support';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

describe('schedule', () => {
  it('creates a pending one-shot at version 1 with a fresh string id, and emits scheduled', async () => {
    const { engine, eventsOf } = harness();
    const timer = await engine.schedule({
      key: 'invoice:42',
      handler: 'work',
      delay: '3d',
      meta: { team: 'b' },
    });
    expect(timer).toMatchObject({
      id: '1',
      key: 'invoice:42',
      version: 1,
      kind: 'once',
      status: 'pending',
      handler: 'work',
      payload: null,
      scheduledAt: START,
      dueAt: START + 3 * DAY,
      delayMs: 3 * DAY,
      runCount: 0,
      awaitTask: true,
      removeOnComplete: true,
      delivery: 'at-least-once',
      lastFiredAt: null,
      lastCompletedAt: null,
      lastErrorAt: null,
      last: null,
      meta: { team: 'b' },
    });
    expect(eventsOf('scheduled')).toEqual([
      {
        type: 'scheduled',
        id: '1',
        key: 'invoice:42',
        version: 1,
        kind: 'once',
        at: START,
        due: START + 3 * DAY,
      },
    ]);
    expect(await engine.get('invoice:42')).toEqual(timer);
  });

  it('runs a one-shot once at its due time, then removes it', async () => {
    const { engine, clock, runs, eventsOf } = harness();
    const { id } = await engine.schedule({ key: 'k', handler: 'work', delay: '10s', payload: {} });
    await clock.advance('9999ms');
    expect(runs).toHaveLength(0);
    await clock.advance('1ms');
    expect(runs).toEqual([
      expect.objectContaining({ key: 'k', id, version: 1, due: START + 10_000, at: START + 10_000 }),
    ]);
    expect(eventsOf('running')).toHaveLength(1);
    expect(eventsOf('completed')).toEqual([expect.objectContaining({ id, version: 1, due: START + 10_000 })]);
    expect(await engine.get('k')).toBeNull();
    expect(await engine.check(id)).toBe(false);
    await clock.advance('30d');
    expect(runs).toHaveLength(1);
  });

  it('runs an `at` already past at once, with the due it asked for', async () => {
    const { engine, clock, runs } = harness();
    await engine.schedule({ key: 'past', handler: 'work', at: START - 5_000 });
    await clock.advance(0);
    expect(runs).toEqual([expect.objectContaining({ due: START - 5_000, at: START })]);
  });

  it('accepts an ISO `at` and hands the payload and context to the handler', async () => {
    const seen: unknown[] = [];
    const { engine, clock } = harness({
      handlers: {
        spy: (payload, ctx) => {
          seen.push(payload, { ...ctx, signal: ctx.signal.aborted, timer: ctx.timer.status });
        },
      },
    });
    await engine.schedule({ key: 'iso', handler: 'spy', at: '2026-03-01T00:01:00Z', payload: { n: 1 } });
    await clock.advance('1m');
    expect(seen).toEqual([
      { n: 1 },
      {
        id: '1',
        key: 'iso',
        version: 1,
        due: START + 60_000,
        runCount: 1,
        payload: { n: 1 },
        signal: false,
        timer: 'running',
      },
    ]);
  });

  it('keeps a finished one-shot with removeOnComplete: false, with its final status and last', async () => {
    const { engine, clock } = harness();
    await engine.schedule({ key: 'ok', handler: 'work', delay: 100, removeOnComplete: false });
    await engine.schedule({
      key: 'bad',
      handler: 'work',
      delay: 100,
      removeOnComplete: false,
      payload: { fail: 'boom', reason: 'empty' },
    });
    await clock.advance(100);
    expect(await engine.get('ok')).toMatchObject({
      status: 'completed',
      runCount: 1,
      lastFiredAt: START + 100,
      lastCompletedAt: START + 100,
      lastErrorAt: null,
      last: { started: START + 100, ended: START + 100, status: 'ok' },
    });
    expect(await engine.get('bad')).toMatchObject({
      status: 'failed',
      lastErrorAt: START + 100,
      lastCompletedAt: null,
      last: {
        started: START + 100,
        ended: START + 100,
        status: 'failed',
        error: { message: 'boom', reason: 'empty' },
      },
    });
    // finished: no longer live, though get and list still show it
    expect(await engine.check('1')).toBe(false);
    expect(await engine.snapshot()).toEqual([]);
    expect((await engine.list()).items.map((t) => t.key)).toEqual(['bad', 'ok']);
  });

  it('records started and ended of an async run apart, and `running` while it runs', async () => {
    const { engine, clock } = harness();
    await engine.schedule({
      key: 'slow',
      handler: 'work',
      delay: 100,
      payload: { sleepMs: 500 },
      removeOnComplete: false,
    });
    await clock.advance(200);
    expect(await engine.get('slow')).toMatchObject({
      status: 'running',
      last: { started: START + 100, status: 'running' },
    });
    await clock.advance(400);
    expect(await engine.get('slow')).toMatchObject({
      status: 'completed',
      last: { started: START + 100, ended: START + 600, status: 'ok' },
    });
  });

  it('never reuses an id, even for a key that comes back', async () => {
    const { engine } = harness();
    const a = await engine.schedule({ key: 'k', handler: 'work', delay: '1h' });
    await engine.cancel('k');
    const b = await engine.schedule({ key: 'k', handler: 'work', delay: '1h' });
    const c = await engine.schedule({ key: 'k', handler: 'work', delay: '1h', ifExists: 'replace' });
    expect([a.id, b.id, c.id]).toEqual(['1', '2', '3']);
  });

  it('copies payloads in and out, so a caller cannot change a stored timer', async () => {
    const { engine } = harness();
    const payload = { list: [1] };
    const timer = await engine.schedule({ key: 'copy', handler: 'work', delay: '1h', payload });
    payload.list.push(2);
    (timer.payload as { list: number[] }).list.push(3);
    expect((await engine.get('copy'))?.payload).toEqual({ list: [1] });
  });

  describe('refusals change nothing', () => {
    it.each([
      [{ key: 'bad key!', handler: 'work', delay: 1 }, 'key'],
      [{ key: 'k', handler: 'work' }, undefined],
      [{ key: 'k', handler: 'work', delay: 1, every: 1000 }, 'every'],
      [{ key: 'k', handler: 'work', cron: '0 7 * * *' }, 'tz'],
      [{ key: 'k', handler: 'work', every: 10 }, 'every'],
    ])('refuses %j as invalid', async (spec, field) => {
      const { engine, events } = harness();
      const error = await engine.schedule(spec as never).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SundialError);
      expect(error).toMatchObject({ reason: 'invalid', field });
      expect((error as SundialError).fix).toEqual(expect.any(String));
      expect(await engine.snapshot()).toEqual([]);
      expect(events).toEqual([]);
    });

    it('refuses a handler this engine does not have, suggesting the closest one', async () => {
      const { engine } = harness();
      await expect(engine.schedule({ key: 'k', handler: 'wrok', delay: 1 })).rejects.toMatchObject({
        reason: 'invalid',
        field: 'handler',
        fix: expect.stringContaining('"work"'),
      });
      expect(await engine.snapshot()).toEqual([]);
    });

    it('honours configured limits', async () => {
      const { engine } = harness({ limits: { maxPayloadBytes: 10, minEveryMs: 5_000 } });
      await expect(engine.schedule({ key: 'k', handler: 'work', every: '1s' })).rejects.toMatchObject({
        field: 'every',
      });
      await expect(
        engine.schedule({ key: 'k', handler: 'work', delay: 1, payload: 'x'.repeat(20) }),
      ).rejects.toMatchObject({ reason: 'payload-too-large' });
    });
  });
});

describe('ifExists', () => {
  it("'error' (the default) refuses a live key with duplicate-key and leaves it as it was", async () => {
    const { engine } = harness();
    const first = await engine.schedule({ key: 'k', handler: 'work', delay: '1h' });
    await expect(engine.schedule({ key: 'k', handler: 'work', delay: '2h' })).rejects.toMatchObject({
      reason: 'duplicate-key',
      field: 'key',
    });
    expect(await engine.get('k')).toEqual(first);
  });

  it("'replace' cancels the old entry (reason replaced) and creates a new id that runs instead", async () => {
    const { engine, clock, runs, eventsOf } = harness();
    const old = await engine.schedule({ key: 'k', handler: 'work', delay: '1h' });
    const fresh = await engine.schedule({ key: 'k', handler: 'work', delay: '2h', ifExists: 'replace' });
    expect(fresh).toMatchObject({ id: '2', version: 1, dueAt: START + 2 * HOUR });
    expect(eventsOf('cancelled')).toEqual([
      expect.objectContaining({ id: old.id, key: 'k', version: 2, reason: 'replaced' }),
    ]);
    await clock.advance('3h');
    expect(runs.map((run) => run.id)).toEqual(['2']);
    expect(await engine.check(old.id)).toBe(false);
  });

  it("'keep' returns the recorded timer unchanged; a later call cannot move it", async () => {
    const { engine, clock, runs, warnings } = harness();
    const first = await engine.schedule({ key: 'doc-expires', handler: 'work', delay: '14d' });
    await clock.advance('1d');
    const again = await engine.schedule({
      key: 'doc-expires',
      handler: 'work',
      delay: '14d',
      ifExists: 'keep',
    });
    expect(again).toEqual(first);
    expect(warnings).toEqual([]);
    const moved = await engine.schedule({
      key: 'doc-expires',
      handler: 'work',
      delay: '20d',
      ifExists: 'keep',
    });
    expect(moved).toEqual(first);
    expect(warnings).toEqual([
      expect.stringMatching(/requested time is ignored.*delay 1209600000 ms.*delay 1728000000 ms/),
    ]);
    await clock.advance('13d');
    expect(runs).toEqual([expect.objectContaining({ due: START + 14 * DAY })]);
  });

  it("'keep' compares absolute times as instants", async () => {
    const { engine, warnings } = harness();
    await engine.schedule({ key: 'k', handler: 'work', at: '2026-03-05T00:00:00Z' });
    await engine.schedule({
      key: 'k',
      handler: 'work',
      at: Date.parse('2026-03-05T00:00:00Z'),
      ifExists: 'keep',
    });
    expect(warnings).toEqual([]);
    await engine.schedule({ key: 'k', handler: 'work', every: '1h', ifExists: 'keep' });
    expect(warnings).toHaveLength(1);
  });

  it("'keep' on a cancelled key returns the cancelled timer until its tombstone expires", async () => {
    const { engine, clock, runs } = harness({ tombstoneMs: 2 * DAY });
    const first = await engine.schedule({ key: 'stale-0', handler: 'work', delay: '3d' });
    await engine.cancel('stale-0');
    const kept = await engine.schedule({ key: 'stale-0', handler: 'work', delay: '3d', ifExists: 'keep' });
    expect(kept).toMatchObject({ id: first.id, status: 'cancelled', version: 2 });
    expect(await engine.get('stale-0')).toBeNull();
    await clock.advance('2d');
    const revived = await engine.schedule({ key: 'stale-0', handler: 'work', delay: '3d', ifExists: 'keep' });
    expect(revived).toMatchObject({ id: '2', status: 'pending' });
    await clock.advance('3d');
    expect(runs.map((run) => run.id)).toEqual(['2']);
  });

  it('a key scheduled again after a cancel no longer answers keep with the old tombstone', async () => {
    const { engine, clock } = harness();
    await engine.schedule({ key: 'k', handler: 'work', delay: 10 });
    await engine.cancel('k');
    await engine.schedule({ key: 'k', handler: 'work', delay: 10 });
    await clock.advance(10);
    const fresh = await engine.schedule({ key: 'k', handler: 'work', delay: 10, ifExists: 'keep' });
    expect(fresh).toMatchObject({ id: '3', status: 'pending' });
  });

  it('a finished row kept by removeOnComplete: false does not hold its key', async () => {
    const { engine, clock, eventsOf } = harness();
    await engine.schedule({ key: 'k', handler: 'work', delay: 10, removeOnComplete: false });
    await clock.advance(10);
    expect(await engine.schedule({ key: 'k', handler: 'work', delay: 10 })).toMatchObject({
      id: '2',
      status: 'pending',
    });
    await engine.schedule({ key: 'j', handler: 'work', delay: 10, removeOnComplete: false });
    await clock.advance(10);
    expect(await engine.schedule({ key: 'j', handler: 'work', delay: 10, ifExists: 'keep' })).toMatchObject({
      id: '4',
      status: 'pending',
    });
    expect(eventsOf('cancelled')).toEqual([]);
  });
});

describe('scheduleMany', () => {
  it('schedules every spec in order', async () => {
    const { engine } = harness();
    const timers = await engine.scheduleMany([
      { key: 'a', handler: 'work', delay: '1m' },
      { key: 'b', handler: 'work', every: '1h' },
    ]);
    expect(timers.map((t) => [t.id, t.key, t.kind])).toEqual([
      ['1', 'a', 'once'],
      ['2', 'b', 'interval'],
    ]);
  });

  it('places nothing when any spec is refused, naming the spec', async () => {
    const { engine } = harness();
    await engine.schedule({ key: 'taken', handler: 'work', delay: '1m' });
    await expect(
      engine.scheduleMany([
        { key: 'a', handler: 'work', delay: '1m' },
        { key: 'b', handler: 'work', delay: -1 },
      ]),
    ).rejects.toMatchObject({ reason: 'invalid', field: 'specs[1].delay' });
    await expect(
      engine.scheduleMany([
        { key: 'a', handler: 'work', delay: '1m' },
        { key: 'taken', handler: 'work', delay: '1m' },
      ]),
    ).rejects.toMatchObject({ reason: 'duplicate-key', field: 'specs[1].key' });
    await expect(
      engine.scheduleMany([
        { key: 'a', handler: 'work', delay: '1m' },
        { key: 'a', handler: 'work', delay: '2m' },
      ]),
    ).rejects.toMatchObject({ reason: 'duplicate-key' });
    await expect(engine.scheduleMany('nope' as never)).rejects.toMatchObject({ field: 'specs' });
    expect(await engine.snapshot()).toEqual(['1']);
  });
});

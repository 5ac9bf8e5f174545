/**
 * docs/spec.md §3.1 and §3.2 on every backend: creating timers, ifExists, tombstones, one-shot runs and
 * outcomes.
 */
import { SundialError, type JsonValue, type TimerContext, type TimerSpec } from '@sundial/core';
import { BACKENDS, useBackend } from './backends';

describe.each(BACKENDS)('%s backend: schedule', (name) => {
  const backend = useBackend(name);

  it('creates a pending one-shot at version 1 at the backend’s now, returns it from get and emits scheduled', async () => {
    const h = await backend.open();
    const before = await h.now();
    const timer = await h.timers.schedule({
      key: 'invoice:42',
      handler: 'work',
      delay: '3d',
      meta: { team: 'b' },
    });
    const after = await h.now();
    expect(timer).toMatchObject({
      id: expect.any(String),
      key: 'invoice:42',
      version: 1,
      kind: 'once',
      status: 'pending',
      handler: 'work',
      payload: null,
      delayMs: 3 * 86_400_000,
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
    expect(timer.scheduledAt).toBeGreaterThanOrEqual(before);
    expect(timer.scheduledAt).toBeLessThanOrEqual(after);
    expect(timer.dueAt).toBe(timer.scheduledAt + 3 * 86_400_000);
    expect(await h.timers.get('invoice:42')).toEqual(timer);
    expect(await h.event({ type: 'scheduled' })).toEqual({
      type: 'scheduled',
      id: timer.id,
      key: 'invoice:42',
      version: 1,
      kind: 'once',
      at: timer.scheduledAt,
      due: timer.dueAt,
    });
  });

  it('runs a one-shot once, never before its due, then removes it', async () => {
    const h = await backend.open();
    const timer = await h.timers.schedule({ key: 'k', handler: 'work', delay: 100 });
    const completed = await h.event({ type: 'completed', key: 'k' });
    expect(completed).toMatchObject({ id: timer.id, version: 1, kind: 'once' });
    expect(h.runs).toEqual([
      expect.objectContaining({ key: 'k', id: timer.id, version: 1, due: timer.dueAt, runCount: 1 }),
    ]);
    expect(h.runs[0].at).toBeGreaterThanOrEqual(timer.dueAt);
    expect((await h.event({ type: 'running', key: 'k' })).at).toBeGreaterThanOrEqual(timer.dueAt);
    expect(await h.timers.get('k')).toBeNull();
    expect(await h.timers.check(timer.id)).toBe(false);
    await h.pass(300);
    expect(h.runs).toHaveLength(1);
  });

  it('runs an `at` already past at once, with the due it asked for', async () => {
    const h = await backend.open();
    const past = (await h.now()) - 5_000;
    await h.timers.schedule({ key: 'past', handler: 'work', at: past });
    await h.until(() => h.runs.length > 0, { what: 'the run' });
    expect(h.runs).toEqual([expect.objectContaining({ key: 'past', due: past })]);
  });

  it('accepts an ISO `at` and hands the payload and context to the handler', async () => {
    const seen: [JsonValue, TimerContext][] = [];
    const h = await backend.open({ handlers: { spy: (payload, ctx) => void seen.push([payload, ctx]) } });
    const at = new Date((await h.now()) + 100).toISOString();
    const timer = await h.timers.schedule({ key: 'iso', handler: 'spy', at, payload: { n: 1 } });
    expect(timer.dueAt).toBe(Date.parse(at));
    await h.until(() => seen.length > 0, { what: 'the run' });
    const [payload, ctx] = seen[0];
    expect(payload).toEqual({ n: 1 });
    expect(ctx).toMatchObject({
      id: timer.id,
      key: 'iso',
      version: 1,
      due: timer.dueAt,
      runCount: 1,
      payload: { n: 1 },
    });
    expect(ctx.signal.aborted).toBe(false);
    expect(ctx.timer).toMatchObject({ status: 'running', runCount: 1, last: { status: 'running' } });
  });

  it('keeps a finished one-shot with removeOnComplete: false, with its final status and last', async () => {
    const h = await backend.open();
    const ok = await h.timers.schedule({ key: 'ok', handler: 'work', delay: 50, removeOnComplete: false });
    await h.timers.schedule({
      key: 'bad',
      handler: 'work',
      delay: 50,
      removeOnComplete: false,
      payload: { fail: 'boom', reason: 'empty' },
    });
    await h.event({ type: 'completed', key: 'ok' });
    const failed = await h.event({ type: 'failed', key: 'bad' });
    expect(failed.error).toEqual({ message: 'boom', reason: 'empty' });
    const done = await h.timers.get('ok');
    expect(done).toMatchObject({ status: 'completed', runCount: 1, lastErrorAt: null });
    expect(done!.last).toEqual({ started: done!.lastFiredAt, ended: done!.lastCompletedAt, status: 'ok' });
    expect(done!.lastFiredAt).toBeGreaterThanOrEqual(ok.dueAt);
    const bad = await h.timers.get('bad');
    expect(bad).toMatchObject({
      status: 'failed',
      lastCompletedAt: null,
      last: { status: 'failed', error: { message: 'boom', reason: 'empty' } },
    });
    expect(bad!.lastErrorAt).toBe(bad!.last!.ended);
    // finished: no longer live, though get and list still show it
    expect(await h.timers.check(ok.id)).toBe(false);
    expect(await h.timers.snapshot()).toEqual([]);
    expect((await h.timers.list()).items.map((t) => t.key)).toEqual(['bad', 'ok']);
  });

  it('shows `running` with last.started while an async run holds the timer, then started and ended apart', async () => {
    const h = await backend.open();
    await h.timers.schedule({
      key: 'slow',
      handler: 'work',
      delay: 50,
      payload: { sleepMs: 400 },
      removeOnComplete: false,
    });
    await h.event({ type: 'running', key: 'slow' });
    const running = await h.timers.get('slow');
    expect(running).toMatchObject({ status: 'running', last: { status: 'running' } });
    await h.event({ type: 'completed', key: 'slow' });
    const done = await h.timers.get('slow');
    expect(done).toMatchObject({
      status: 'completed',
      last: { started: running!.last!.started, status: 'ok' },
    });
    expect(done!.last!.ended! - done!.last!.started).toBeGreaterThanOrEqual(400);
  });

  it('never reuses an id, even for a key that comes back', async () => {
    const h = await backend.open();
    const a = await h.timers.schedule({ key: 'k', handler: 'work', delay: '1h' });
    await h.timers.cancel('k');
    const b = await h.timers.schedule({ key: 'k', handler: 'work', delay: '1h' });
    const c = await h.timers.schedule({ key: 'k', handler: 'work', delay: '1h', ifExists: 'replace' });
    expect(new Set([a.id, b.id, c.id]).size).toBe(3);
  });

  it.each([
    [{ key: 'bad key!', handler: 'work', delay: 1 }, 'key'],
    [{ key: 'k', handler: 'work' }, undefined],
    [{ key: 'k', handler: 'work', delay: 1, every: 1000 }, 'every'],
    [{ key: 'k', handler: 'work', cron: '0 7 * * *' }, 'tz'],
    [{ key: 'k', handler: 'work', every: 10 }, 'every'],
  ])('refuses %j as invalid and changes nothing', async (spec, field) => {
    const h = await backend.open();
    const error = await h.timers.schedule(spec as never).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SundialError);
    expect(error).toMatchObject({ reason: 'invalid', field, fix: expect.any(String) });
    expect(await h.timers.snapshot()).toEqual([]);
    expect((await h.timers.list()).items).toEqual([]);
  });
});

describe.each(BACKENDS)('%s backend: ifExists', (name) => {
  const backend = useBackend(name);

  it("'error' (the default) refuses a live key with duplicate-key and leaves it as it was", async () => {
    const h = await backend.open();
    const first = await h.timers.schedule({ key: 'k', handler: 'work', delay: '1h' });
    await expect(h.timers.schedule({ key: 'k', handler: 'work', delay: '2h' })).rejects.toMatchObject({
      reason: 'duplicate-key',
      field: 'key',
    });
    expect(await h.timers.get('k')).toEqual(first);
  });

  it("'replace' cancels the old entry (reason replaced) and creates a new id that runs instead", async () => {
    const h = await backend.open();
    const old = await h.timers.schedule({ key: 'k', handler: 'work', delay: 100 });
    const fresh = await h.timers.schedule({ key: 'k', handler: 'work', delay: 150, ifExists: 'replace' });
    expect(fresh).toMatchObject({ version: 1, status: 'pending' });
    expect(fresh.id).not.toBe(old.id);
    expect(await h.event({ type: 'cancelled', id: old.id })).toMatchObject({
      key: 'k',
      version: 2,
      reason: 'replaced',
    });
    await h.event({ type: 'completed', id: fresh.id });
    await h.pass(100);
    expect(h.runs.map((run) => run.id)).toEqual([fresh.id]);
    expect(await h.timers.check(old.id)).toBe(false);
  });

  it("'keep' returns the recorded timer unchanged; a later call cannot move it", async () => {
    const h = await backend.open();
    const first = await h.timers.schedule({ key: 'expires', handler: 'work', delay: 200 });
    await h.pass(50);
    expect(
      await h.timers.schedule({ key: 'expires', handler: 'work', delay: 200, ifExists: 'keep' }),
    ).toEqual(first);
    expect(
      await h.timers.schedule({ key: 'expires', handler: 'work', delay: '20d', ifExists: 'keep' }),
    ).toEqual(first);
    await h.event({ type: 'completed', key: 'expires' });
    expect(h.runs).toEqual([expect.objectContaining({ id: first.id, due: first.dueAt })]);
  });

  it("'keep' on a cancelled key returns the cancelled timer until its tombstone expires", async () => {
    const h = await backend.open({ tombstoneMs: 200 });
    const first = await h.timers.schedule({ key: 'gone', handler: 'work', delay: 100 });
    await h.timers.cancel('gone');
    const kept = await h.timers.schedule({ key: 'gone', handler: 'work', delay: 100, ifExists: 'keep' });
    expect(kept).toMatchObject({ id: first.id, status: 'cancelled', version: 2 });
    expect(await h.timers.get('gone')).toBeNull();
    const revived = await h.until(
      async () => {
        const timer = await h.timers.schedule({ key: 'gone', handler: 'work', delay: 100, ifExists: 'keep' });
        return timer.status === 'pending' && timer;
      },
      { what: 'the tombstone to expire' },
    );
    expect(revived.id).not.toBe(first.id);
    await h.event({ type: 'completed', key: 'gone' });
    expect(h.runs.map((run) => run.id)).toEqual([revived.id]);
  });

  it('a key scheduled again after a cancel no longer answers keep with the old tombstone', async () => {
    const h = await backend.open();
    await h.timers.schedule({ key: 'k', handler: 'work', delay: 10 });
    await h.timers.cancel('k');
    const again = await h.timers.schedule({ key: 'k', handler: 'work', delay: 10 });
    await h.event({ type: 'completed', id: again.id });
    const fresh = await h.timers.schedule({ key: 'k', handler: 'work', delay: 10, ifExists: 'keep' });
    expect(fresh).toMatchObject({ status: 'pending' });
    expect(fresh.id).not.toBe(again.id);
  });

  it('a finished row kept by removeOnComplete: false does not hold its key', async () => {
    const h = await backend.open();
    const k = await h.timers.schedule({ key: 'k', handler: 'work', delay: 10, removeOnComplete: false });
    const j = await h.timers.schedule({ key: 'j', handler: 'work', delay: 10, removeOnComplete: false });
    await h.event({ type: 'completed', id: k.id });
    await h.event({ type: 'completed', id: j.id });
    const k2 = await h.timers.schedule({ key: 'k', handler: 'work', delay: '1h' });
    expect(k2).toMatchObject({ status: 'pending', version: 1 });
    expect(k2.id).not.toBe(k.id);
    const j2 = await h.timers.schedule({ key: 'j', handler: 'work', delay: '1h', ifExists: 'keep' });
    expect(j2).toMatchObject({ status: 'pending' });
    expect(j2.id).not.toBe(j.id);
    expect(h.eventsOf('cancelled')).toEqual([]);
  });
});

describe.each(BACKENDS)('%s backend: scheduleMany', (name) => {
  const backend = useBackend(name);

  it('schedules every spec and returns them in input order', async () => {
    const h = await backend.open();
    const timers = await h.timers.scheduleMany([
      { key: 'a', handler: 'work', delay: '1m' },
      { key: 'b', handler: 'work', every: '1h' },
      { key: 'c', handler: 'work', delay: 50 },
    ]);
    expect(timers.map((t) => [t.key, t.kind, t.version])).toEqual([
      ['a', 'once', 1],
      ['b', 'interval', 1],
      ['c', 'once', 1],
    ]);
    expect((await h.timers.snapshot()).sort()).toEqual(timers.map((t) => t.id).sort());
    await h.event({ type: 'completed', key: 'c' });
  });

  it('places nothing when any spec is refused', async () => {
    const h = await backend.open();
    const taken = await h.timers.schedule({ key: 'taken', handler: 'work', delay: '1m' });
    const refused = (specs: TimerSpec[]) =>
      h.timers.scheduleMany([{ key: 'a', handler: 'work', delay: '1m' }, ...specs]);
    await expect(refused([{ key: 'b', handler: 'work', delay: -1 }])).rejects.toMatchObject({
      reason: 'invalid',
    });
    await expect(refused([{ key: 'taken', handler: 'work', delay: '1m' }])).rejects.toMatchObject({
      reason: 'duplicate-key',
    });
    await expect(refused([{ key: 'a', handler: 'work', delay: '2m' }])).rejects.toMatchObject({
      reason: 'duplicate-key',
    });
    await expect(h.timers.scheduleMany('nope' as never)).rejects.toMatchObject({ field: 'specs' });
    expect(await h.timers.snapshot()).toEqual([taken.id]);
  });

  // docs/spec.md §3.1: a refused batch names the spec that was refused, `specs[i].field`, on every backend.
  it('names the refused spec of a batch in the field', async () => {
    const h = await backend.open();
    await h.timers.schedule({ key: 'taken', handler: 'work', delay: '1m' });
    const spec = (key: string, more: Partial<TimerSpec> = {}): TimerSpec => ({
      key,
      handler: 'work',
      delay: '1m',
      ...more,
    });
    const cases: [TimerSpec[], string, string][] = [
      [[spec('a'), spec('b', { delay: -1 })], 'invalid', 'specs[1].delay'],
      [[spec('a'), spec('b'), 'nope' as never], 'invalid', 'specs[2]'],
      [[spec('a'), spec('b', { meta: { sundialOwner: 'x' } })], 'invalid', 'specs[1].meta.sundialOwner'],
      [[spec('a'), spec('b'), spec('taken')], 'duplicate-key', 'specs[2].key'],
      // A key named twice is refused at its second spec, before (and whether or not) it is found live.
      [[spec('a'), spec('b'), spec('a', { delay: '2m' })], 'duplicate-key', 'specs[2].key'],
      [[spec('taken'), spec('taken', { delay: '2m' })], 'duplicate-key', 'specs[1].key'],
    ];
    for (const [specs, reason, field] of cases) {
      const index = /^specs\[(\d+)\]/.exec(field)?.[1];
      await expect(h.timers.scheduleMany(specs)).rejects.toMatchObject({
        reason,
        field,
        message: expect.stringMatching(new RegExp(`^specs\\[${index}\\]: `)),
      });
    }
    expect((await h.timers.list()).items.map((timer) => timer.key)).toEqual(['taken']);
    // a key the batch names twice is refused as the batch's own, not as a live timer's (none exists)
    await expect(
      h.timers.scheduleMany([spec('a'), spec('b'), spec('a', { delay: '2m' })]),
    ).rejects.toMatchObject({
      message: 'specs[2]: key "a" is also specs[0]\'s: this batch names it twice.',
      fix: expect.stringContaining("give it ifExists: 'replace'"),
    });
  });
});

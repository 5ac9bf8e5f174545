/**
 * docs/spec.md §3.3c on every backend: catch-up after downtime, jitter, startAt/endAt, backfill.
 * The tests of a block run side by side (`it.concurrent`): each opens its own timers, dispatcher and
 * runner (Redis: on a prefix of its own) and waits on the backend's time.
 */
import { jitterOf, nextCronSlot, type TimerSpec } from '@sundial/core';
import { BACKENDS, useBackend } from './backends';

const HOUR = 3_600_000;
const hourly = (extra: Partial<TimerSpec> = {}): TimerSpec => ({
  key: 'hourly',
  handler: 'work',
  every: '1h',
  ...extra,
});

describe.each(BACKENDS)('%s backend: catch-up after downtime', (name) => {
  const backend = useBackend(name);

  it.concurrent(
    "catchup 'once' (the default): a 1-hour interval down for 10 hours runs once and counts 9 missed",
    async () => {
      const h = await backend.open();
      await h.timers.schedule(hourly());
      await h.downFor(10 * HOUR);
      const skipped = await h.event({ type: 'skipped', key: 'hourly', reason: 'missed' });
      expect(skipped.count).toBe(9);
      expect(h.runs).toHaveLength(1);
      const row = await h.timers.get('hourly');
      // the one run was for the slot it was armed for; the next is the first slot after now
      expect(row!.dueAt - h.runs[0].due).toBe(10 * HOUR);
      expect(row!.dueAt).toBeGreaterThan(await h.now());
    },
  );

  it.concurrent(
    "catchup 'skip': runs none of the missed slots, counts all 10, and arms the next future slot",
    async () => {
      const h = await backend.open();
      const timer = await h.timers.schedule(hourly({ catchup: 'skip' }));
      expect(timer.catchup).toBe('skip');
      await h.downFor(10 * HOUR);
      const skipped = await h.event({ type: 'skipped', key: 'hourly', reason: 'missed' });
      expect(skipped.count).toBe(10);
      const row = await h.until(async () => {
        const read = await h.timers.get('hourly');
        return read !== null && read.version > 1 && read;
      });
      expect(h.runs).toHaveLength(0);
      expect(row).toMatchObject({ status: 'pending', runCount: 0, catchup: 'skip' });
      expect(row.dueAt).toBeGreaterThan(await h.now());
      expect(row.dueAt - (await h.now())).toBeLessThanOrEqual(HOUR);
    },
  );

  it.concurrent(
    'an endAt passed while down: only the slots up to it count missed, none after it',
    async () => {
      const h = await backend.open();
      const endAt = (await h.now()) + 4.5 * HOUR; // slots at 1h..4h; the 5h and 6h ones are after it
      for (const catchup of ['once', 'skip'] as const) {
        await h.timers.schedule(hourly({ key: catchup, catchup, endAt, removeOnComplete: false }));
      }
      await h.downFor(6 * HOUR);
      const ended = await h.eventsOnceCome('completed', 2);
      expect(ended.map((event) => [event.key, event.reason]).sort()).toEqual([
        ['once', 'ended'],
        ['skip', 'ended'],
      ]);
      const missed = await h.eventsOnceCome('skipped', 2);
      expect(missed.map((event) => [event.key, event.count]).sort()).toEqual([
        ['once', 3], // the 1h slot ran, late
        ['skip', 4],
      ]);
    },
  );

  it.concurrent(
    "catchup 'all': runs the 10 missed slots in order, each with its own due, then goes on",
    async () => {
      const h = await backend.open();
      await h.timers.schedule(hourly({ catchup: 'all', catchupWindow: '1d' }));
      await h.downFor(10 * HOUR);
      await h.until(() => h.runs.length === 10, { what: 'ten runs', within: 10_000 });
      const dues = h.runs.map((run) => run.due);
      expect(dues.slice(1).map((due, i) => due - dues[i])).toEqual(Array(9).fill(HOUR));
      expect(h.eventsOf('skipped')).toEqual([]);
      const row = await h.until(async () => {
        const read = await h.timers.get('hourly');
        return read?.status === 'pending' && read.runCount === 10 && read;
      });
      expect(row.dueAt).toBe(dues[9] + HOUR);
      expect(row.dueAt).toBeGreaterThan(await h.now());
    },
  );

  it.concurrent(
    "catchup 'all' with a 3-hour window runs only the slots inside it and counts the older ones",
    async () => {
      const h = await backend.open();
      await h.timers.schedule(hourly({ catchup: 'all', catchupWindow: '3h' }));
      await h.downFor(10 * HOUR);
      const skipped = await h.event({ type: 'skipped', key: 'hourly', reason: 'missed' });
      // the slots in now−3h..now run: 3 or 4 of them, depending on where now falls between two slots
      expect([6, 7]).toContain(skipped.count);
      await h.until(() => h.runs.length === 10 - skipped.count!, { what: 'the runs inside the window' });
      await h.pass(50);
      expect(h.runs).toHaveLength(10 - skipped.count!);
      expect(h.runs[0].due).toBeGreaterThanOrEqual((await h.now()) - 3 * HOUR - 100);
    },
  );
});

describe.each(BACKENDS)('%s backend: jitter, startAt, endAt', (name) => {
  const backend = useBackend(name);

  it.concurrent(
    'jitter moves each slot by the same deterministic amount in [0, jitter) on every backend, never early',
    async () => {
      const h = await backend.open();
      const timer = await h.timers.schedule({
        key: 'jittered:1',
        handler: 'work',
        every: 200,
        jitter: 150,
        maxRuns: 4,
      });
      expect(timer.jitter).toBe(150);
      const firstSlot = timer.scheduledAt + 200;
      expect(timer.dueAt).toBe(firstSlot + jitterOf('jittered:1', firstSlot, 150));
      await h.until(() => h.runs.length === 4, { what: 'four runs' });
      for (const run of h.runs) {
        const slot = run.due - ((run.due - timer.scheduledAt) % 200);
        expect((slot - timer.scheduledAt) % 200).toBe(0);
        // the same number core computes: both backends, every replica
        expect(run.due - slot).toBe(jitterOf('jittered:1', slot, 150));
        expect(run.at).toBeGreaterThanOrEqual(run.due);
      }
    },
  );

  // catchup 'all': every slot of the window runs however late the runner is (with 'once' a runner late
  // by 200 ms folds slots together: of 3 runs, load 8, once); startAt 2 s away, after the call lands.
  it.concurrent(
    'startAt: no slot before it; endAt: no slot after it, and the timer ends with reason ended',
    async () => {
      const h = await backend.open();
      const startAt = (await h.now()) + 2_000;
      const endAt = startAt + 500;
      const spec = { key: 'window', handler: 'work', every: 100, catchup: 'all', startAt, endAt } as const;
      const timer = await h.timers.schedule(spec);
      expect(timer).toMatchObject({ startAt, endAt });
      expect(timer.dueAt).toBeGreaterThanOrEqual(startAt);
      expect(timer.dueAt - startAt).toBeLessThan(100);
      await h.event({ type: 'completed', key: 'window', reason: 'ended' }, { within: 8_000 }); // deadline
      // the grid slots (anchored at creation) from startAt to endAt, each once, in order — but for a slot
      // that came while the run before it still went on (a loaded host: a completion 100 ms late), which
      // overlap 'skip' (the default) skips and counts, whatever the catch-up (docs/spec.md §3.3a)
      const slots = [0, 1, 2, 3, 4, 5].map((n) => timer.dueAt + n * 100).filter((slot) => slot <= endAt);
      const ran = h.runs.map((run) => run.due);
      expect(ran[0]).toBe(slots[0]);
      expect(ran).toEqual(slots.filter((slot) => ran.includes(slot)));
      const overlapSkips = () =>
        h
          .eventsOf('skipped')
          .filter((event) => event.reason === 'overlap')
          .reduce((sum, event) => sum + (event.count ?? 0), 0);
      // (on Redis the events cross pub/sub: they may come after the row was read)
      await h.until(() => overlapSkips() === slots.length - ran.length, { what: 'the overlap skips' });
      await h.until(async () => (await h.timers.get('window')) === null, { what: 'removal' });
    },
  );

  it.concurrent("a cron's first slot is its first occurrence not before startAt", async () => {
    const h = await backend.open();
    const startAt = (await h.now()) + 2_500;
    const timer = await h.timers.schedule({
      key: 'later',
      handler: 'work',
      cron: '* * * * * *',
      tz: 'UTC',
      startAt: new Date(startAt).toISOString(),
      maxRuns: 1,
    });
    expect(timer.startAt).toBe(startAt);
    expect(timer.dueAt).toBe(Math.ceil(startAt / 1000) * 1000);
    await h.until(() => h.runs.length === 1, { what: 'the first run' });
    expect(h.runs[0].due).toBe(timer.dueAt);
  });

  it.concurrent(
    'refuses policies on a one-shot timer and an endAt before the first slot, with field and fix',
    async () => {
      const h = await backend.open();
      await expect(
        h.timers.schedule({ key: 'k', handler: 'work', delay: '1m', catchup: 'all' }),
      ).rejects.toMatchObject({
        reason: 'invalid',
        field: 'catchup',
        fix: expect.stringMatching(/every or cron/),
      });
      await expect(
        h.timers.schedule({ key: 'k', handler: 'work', every: '1m', jitter: '1m' }),
      ).rejects.toMatchObject({ reason: 'invalid', field: 'jitter' });
      const now = await h.now();
      await expect(
        h.timers.schedule({ key: 'k', handler: 'work', every: '1h', endAt: now + 60_000 }),
      ).rejects.toMatchObject({ reason: 'invalid', field: 'endAt' });
      expect(await h.timers.get('k')).toBeNull();
    },
  );

  // §3.3: an hour range runs no time in a gap and a repeated time twice; fixed hours (a list) run a time
  // in the gap at its end (03:00) and a repeated one once. `fallBack`: the day the offset falls back.
  it.concurrent.each([
    ['30 1-2 * * *', 'a gap is not run, an overlap runs twice', '01:30', '01:30 01:30 02:30'],
    ['30 1,2 * * *', 'a gap runs at its end, an overlap once', '01:30 03:00', '01:30 02:30'],
  ])(
    'DST days still follow §3.3 with jitter and catch-up on: %s, %s',
    async (cron, _rule, springForward, fallBack) => {
      const h = await backend.open();
      const spec: TimerSpec = {
        key: 'dst',
        handler: 'work',
        cron,
        tz: 'America/Toronto',
        jitter: '10m',
        catchup: 'all',
        catchupWindow: '45d',
      };
      await h.timers.schedule(spec);
      // Memory starts on 2026-03-01: 40 days cover the spring-forward day. Redis runs on today's date:
      // 40 days back cover the last fall-back day while it is in November or December.
      await h.downFor(40 * 24 * HOUR);
      await h.until(() => h.runs.length >= 70, { what: 'the catch-up', within: 20_000 });
      // Each run is due at its slot moved by the slot's jitter; the slots are the cron's, one after another.
      const first = nextCronSlot(spec.cron!, spec.tz!, h.runs[0].due - 10 * 60_000 - 1)!;
      const slots: number[] = [];
      for (let i = 0, slot = first; i < 70; i++, slot = nextCronSlot(spec.cron!, spec.tz!, slot)!) {
        expect(h.runs[i].due).toBe(slot + jitterOf('dst', slot, 600_000));
        slots.push(slot);
      }
      // The slots by local day: 01:30 and 02:30, but on a spring-forward day (02:30 does not exist) and a
      // fall-back day (01:30 occurs twice) as the rule says.
      const wall = new Intl.DateTimeFormat('en-CA', {
        timeZone: spec.tz,
        year: 'numeric',
        month: '2-digit',
        day: '2-digit',
        hour: '2-digit',
        minute: '2-digit',
        hourCycle: 'h23',
      });
      const byDay = new Map<string, string[]>();
      for (const slot of slots) {
        const [day, time] = wall.format(slot).split(', ');
        byDay.set(day, [...(byDay.get(day) ?? []), time]);
      }
      const whole = [...byDay.values()].slice(1, -1).map((times) => times.join(' '));
      const dstDays = whole.filter((times) => times !== '01:30 02:30');
      // Memory's range always holds 2026-03-08; Redis's (the 40 days before today) holds a change when the
      // offset changed — a fall-back day reads as any other day where a fixed time runs once.
      const offset = new Intl.DateTimeFormat('en-US', { timeZone: spec.tz, timeZoneName: 'shortOffset' });
      const zone = (slot: number) =>
        offset.formatToParts(slot).find((part) => part.type === 'timeZoneName')!.value;
      const [before, after] = [zone(slots[0]), zone(slots[slots.length - 1])];
      const day = before === after ? null : before === 'GMT-5' ? springForward : fallBack;
      expect(dstDays).toEqual(day === null || day === '01:30 02:30' ? [] : [day]);
    },
  );
});

describe.each(BACKENDS)('%s backend: backfill', (name) => {
  const backend = useBackend(name);

  it.concurrent(
    'runs the slots of a past range now, in order, each with its own due, then the schedule goes on',
    async () => {
      const h = await backend.open();
      const timer = await h.timers.schedule({ key: 'daily', handler: 'work', every: '1h' });
      const from = timer.scheduledAt - 5 * HOUR + 1;
      const to = timer.scheduledAt - 2 * HOUR;
      // the grid is anchor + k·every: inside [from, to] lie anchor − 4h, −3h, −2h
      expect(await h.timers.backfill('daily', { from, to })).toEqual({ slots: 3 });
      await h.until(() => h.runs.length === 3, { what: 'three backfill runs' });
      expect(h.runs.map((run) => timer.scheduledAt - run.due)).toEqual([4 * HOUR, 3 * HOUR, 2 * HOUR]);
      const row = await h.until(async () => {
        const read = await h.timers.get('daily');
        return read?.status === 'pending' && read.runCount === 3 && read;
      });
      expect(row.dueAt).toBe(timer.dueAt);
    },
  );

  it.concurrent('with maxRuns: runs and counts only the slots its runs left allow', async () => {
    const h = await backend.open();
    const timer = await h.timers.schedule({ key: 'capped', handler: 'work', every: '1h', maxRuns: 2 });
    const range = { from: timer.scheduledAt - 4 * HOUR, to: timer.scheduledAt - 1 };
    expect(await h.timers.backfill('capped', range)).toEqual({ slots: 2 });
    expect(await h.event({ type: 'scheduled', reason: 'backfill' })).toMatchObject({ count: 2 });
    expect(await h.event({ type: 'completed', reason: 'max-runs' })).toMatchObject({ key: 'capped' });
    expect(h.runs.map((run) => timer.scheduledAt - run.due)).toEqual([4 * HOUR, 3 * HOUR]);
    expect((await h.timers.history('capped')).find((entry) => entry.event === 'backfilled')).toMatchObject({
      count: 2,
    });
  });

  it.concurrent(
    'refuses a range in the future, one with too many slots, a one-shot timer and an unknown key',
    async () => {
      const h = await backend.open();
      const timer = await h.timers.schedule({ key: 'fast', handler: 'work', every: '1s' });
      const now = timer.scheduledAt;
      await expect(h.timers.backfill('fast', { from: now - 1000, to: now + HOUR })).rejects.toMatchObject({
        reason: 'invalid',
        field: 'to',
      });
      await expect(h.timers.backfill('fast', { from: now - 2 * HOUR, to: now - HOUR })).rejects.toMatchObject(
        {
          reason: 'invalid',
          field: 'range',
          fix: expect.stringMatching(/1000/),
        },
      );
      await expect(
        h.timers.backfill('fast', { from: new Date(now).toISOString(), to: now - HOUR }),
      ).rejects.toMatchObject({ reason: 'invalid', field: 'to' });
      await h.timers.schedule({ key: 'one', handler: 'work', delay: '1h' });
      await expect(h.timers.backfill('one', { from: now - HOUR, to: now - 1 })).rejects.toMatchObject({
        reason: 'invalid',
        field: 'key',
      });
      await expect(h.timers.backfill('nobody', { from: now - HOUR, to: now - 1 })).rejects.toMatchObject({
        reason: 'not-found',
      });
      expect(h.runs).toHaveLength(0);
    },
  );
});

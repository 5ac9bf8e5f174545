/**
 * docs/spec.md §2 "Refusal order", §3.3c, §3.4 on every backend: one order of refusals. The arguments on
 * their own first (before any row is read: a bad `from` or `at` on a key with no timer is `invalid`, not
 * `not-found`); then the row — no live timer, then what the timer is (a one-shot; a backfill range its
 * schedule refuses: backwards, not past, before its startAt, over 1000 slots; or one holding none of its
 * slots, answered 0), and only then what it is doing (`inactive` while running or paused): a refusal a
 * later retry cannot cure comes before one it can. The engine answered `inactive` before a range refusal
 * and `not-found` before a malformed argument; Redis the other way round.
 */
import { nextCronOccurrence, type TimerSpec } from '@sundial/core';
import { SundialKeys } from '@sundial/redis';
import { BACKENDS, type Harness, useBackend } from './backends';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** A backfill of `key` refused with `reason` on `field` (`range` refusals name the range, not `key`). */
async function refused(h: Harness, key: string, range: { from: number; to: number }, field: string) {
  await expect(h.timers.backfill(key, range)).rejects.toMatchObject({ reason: 'invalid', field });
}

/** An hourly timer `key` whose startAt is 70 days back (1100 slots in the 1100 h after it), made `status`. */
async function hourly(h: Harness, key: string, status: 'running' | 'paused') {
  const startAt = (await h.now()) - 70 * DAY;
  const payload = { sleepMs: 4_000 };
  const timer = await h.timers.schedule({ key, handler: 'work', every: '1h', startAt, payload });
  if (status === 'paused') await h.timers.pause(key);
  else {
    // a trigger's run holds it: on the backend's clock, virtual for memory, a real short wait on Redis
    await h.timers.trigger(key);
    await h.started({ key });
  }
  return { startAt, scheduledAt: timer.scheduledAt };
}

describe.each(BACKENDS)('%s backend: refusal order', (name) => {
  const backend = useBackend(name);

  it.concurrent.each(['running', 'paused'] as const)(
    'a %s timer refuses a bad backfill range for the range, not inactive; a good one inactive',
    async (status) => {
      const h = await backend.open();
      const { startAt, scheduledAt } = await hourly(h, 't', status);
      const before = await h.timers.get('t');
      expect(before?.status).toBe(status);
      const now = await h.now();
      await refused(h, 't', { from: now - 2 * HOUR, to: now - 3 * HOUR }, 'to'); // backwards
      await refused(h, 't', { from: now - 2 * HOUR, to: now + HOUR }, 'to'); // not past
      await refused(h, 't', { from: startAt - 2 * HOUR, to: startAt - 1 }, 'range'); // before startAt
      await refused(h, 't', { from: startAt, to: startAt + 1_100 * HOUR }, 'range'); // over 1000 slots
      // between two slots of its grid (scheduledAt + k·1h): nothing to run, answered as on a waiting timer
      const between = scheduledAt - HOUR / 2;
      expect(await h.timers.backfill('t', { from: between, to: between })).toEqual({ slots: 0 });
      // a range it could run is the one refused for the state
      await expect(h.timers.backfill('t', { from: now - 2 * HOUR, to: now - 1 })).rejects.toMatchObject({
        reason: 'inactive',
        detail: { status },
      });
      expect(await h.timers.get('t')).toEqual(before);
    },
  );

  it.concurrent('a malformed argument is refused before the key is looked up', async () => {
    const h = await backend.open();
    await expect(h.timers.backfill('nobody', { from: 'yesterday', to: 1 })).rejects.toMatchObject({
      reason: 'invalid',
      field: 'from',
    });
    await expect(h.timers.reschedule('nobody', { at: 'tomorrow' })).rejects.toMatchObject({
      reason: 'invalid',
      field: 'at',
    });
    // the key is the first argument: a bad one with a bad range names the key
    await expect(h.timers.backfill('', { from: 'yesterday', to: 1 })).rejects.toMatchObject({
      reason: 'invalid',
      field: 'key',
    });
    // well formed, the same calls meet no timer
    await expect(h.timers.backfill('nobody', { from: 0, to: 1 })).rejects.toMatchObject({
      reason: 'not-found',
    });
  });
});

describe.each(BACKENDS)('%s backend: a spec whose endAt comes before its first slot', (name) => {
  const backend = useBackend(name);

  it('is refused invalid on endAt before its key is looked up, and refuses its whole batch', async () => {
    const h = await backend.open();
    const now = await h.now();
    // monthly, ending the ms before its first slot
    const endAt = nextCronOccurrence('0 0 1 * *', 'UTC', now) - 1;
    const early = { handler: 'work', cron: '0 0 1 * *', tz: 'UTC', endAt };
    const live = await h.timers.schedule({ key: 'live', handler: 'work', delay: '1h' });
    const endsEarly = (field: string) => ({ reason: 'invalid', field });
    // the engine answered the live key first: duplicate-key, and `keep` the live timer
    for (const ifExists of ['error', 'keep'] as const)
      await expect(h.timers.schedule({ key: 'live', ...early, ifExists })).rejects.toMatchObject(
        endsEarly('endAt'),
      );
    // a batch: named at its spec, nothing written (the engine created the specs before it)
    const specs: TimerSpec[] = [
      { key: 'first', handler: 'work', delay: '1h' },
      { key: 'second', handler: 'work', every: '40d', endAt }, // its first slot: in 40 days
      { key: 'third', ...early },
    ];
    await expect(h.timers.scheduleMany(specs)).rejects.toMatchObject({
      ...endsEarly('specs[1].endAt'),
      message: expect.stringMatching(/^specs\[1\]: endAt /),
    });
    await expect(h.timers.scheduleMany([specs[0], specs[2]])).rejects.toMatchObject(
      endsEarly('specs[1].endAt'),
    );
    expect((await h.timers.list()).items).toEqual([live]);
  });

  it('a batch naming two live keys is refused at the first of them, whatever their partitions', async () => {
    const h = await backend.open();
    // on Redis (2 partitions, backends.ts) a guard call per partition finds each one's first live key
    const layout = new SundialKeys('p', 2);
    const keys = Array.from({ length: 20 }, (_, n) => `d:${n}`);
    const [fresh, late] = keys.filter((key) => layout.partitionOf(key) === 0);
    const early = keys.find((key) => layout.partitionOf(key) === 1)!;
    for (const key of [early, late]) await h.timers.schedule({ key, handler: 'work', delay: '1h' });
    const specs = [fresh, early, late].map((key): TimerSpec => ({ key, handler: 'work', delay: '2h' }));
    await expect(h.timers.scheduleMany(specs)).rejects.toMatchObject({
      reason: 'duplicate-key',
      field: 'specs[1].key',
    });
    expect(await h.timers.get(fresh)).toBeNull();
    // over 100 specs in one partition (two calls on Redis: the first checks the second's keys)
    const many = Array.from({ length: 400 }, (_, n) => `e:${n}`).filter(
      (key) => layout.partitionOf(key) === 0,
    );
    for (const key of [many[10], many[120]]) await h.timers.schedule({ key, handler: 'work', delay: '1h' });
    const batch = many.slice(0, 150).map((key): TimerSpec => ({ key, handler: 'work', delay: '2h' }));
    await expect(h.timers.scheduleMany(batch)).rejects.toMatchObject({ field: 'specs[10].key' });
  });
});

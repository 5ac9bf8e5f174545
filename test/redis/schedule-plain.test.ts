import type { TimerSpec } from '@sundial/core';
import { refusal, useStore } from './store-fixture';

const store = useStore();

/**
 * schedule.lua's way for a plain one-shot (an `at`, no other row field; docs/design.md "scheduleMany"):
 * its row written as the spec came, its ids made from a table of digits, its due the `at` text it was
 * sent with (no entry in the answer of a call only its client repeats), and the dispatchers' wake decided
 * once per call.
 */
describe('scheduleMany of plain one-shots', () => {
  it('gives the ids the client expects across every hundred of the partition seq', async () => {
    const timers = store.open();
    const at = Date.now() + 3_600_000;
    const specs = (from: number, count: number): TimerSpec[] =>
      Array.from({ length: count }, (_, i) => ({ key: `k:${from + i}`, handler: 'h', at: at + i }));
    // seqs 1..250 (below 100 no head), then from 9,990 across 10,000 (a head of one digit, then two)
    const created = [...(await timers.scheduleMany(specs(0, 250)))];
    await store.raw.set(`${timers.keys.base(0)}seq`, 9_989);
    created.push(...(await timers.scheduleMany(specs(250, 30))));
    const expected = [
      ...Array.from({ length: 250 }, (_, i) => i + 1),
      ...Array.from({ length: 30 }, (_, i) => 9_990 + i),
    ];
    expect(created.map((timer) => timer.id)).toEqual(expected.map((seq) => `${seq}p0`));
    for (const timer of created) {
      expect(await store.raw.hget(`${timers.keys.base(0)}t:${timer.key}`, 'id')).toBe(timer.id);
      expect(await timers.get(timer.key)).toEqual(timer);
    }
  });

  it('answers a call only it repeats with no entry per plain one-shot, and keeps that answer in one line', async () => {
    const timers = store.open();
    const at = Date.now() + 3_600_000;
    const specs = Array.from({ length: 100 }, (_, i) => ({
      key: `k:${i}`,
      handler: 'h',
      payload: { i },
      at: at + 7 * i,
    }));
    // a fresh request id: only this client resends the call (lost-replies.test.ts resends one)
    const created = await timers.scheduleMany(specs);
    expect(created.map((timer) => [timer.id, timer.dueAt])).toEqual(
      specs.map((spec, i) => [`${i + 1}p0`, spec.at]),
    );
    const [memo] = await store.raw.keys(`${timers.keys.base(0)}q:*`);
    expect(await store.raw.get(memo)).toBe(`${created[0].scheduledAt} 1`);
  });

  it("keeps the first answer of a caller's request id as a release before this one reads it: no '@'", async () => {
    const timers = store.open();
    const at = Date.now() + 3_600_000;
    const specs = Array.from({ length: 3 }, (_, i) => ({ key: `k:${i}`, handler: 'h', at: at + 7 * i }));
    const [first] = await timers.scheduleMany(specs, { requestId: 'named' });
    const text = (await store.raw.get(`${timers.keys.base(0)}q:named:s0`)) ?? '';
    const sa = first.scheduledAt;
    expect(text.split('\n')).toEqual([`${sa} 1`, ...specs.map((spec) => String(spec.at - sa))]);
  });

  it('refuses a plain batch with a live key unchanged, and answers it retried as the first time', async () => {
    const timers = store.open();
    const at = Date.now() + 3_600_000;
    await timers.schedule({ key: 'k:3', handler: 'h', at });
    const specs = Array.from({ length: 6 }, (_, i) => ({
      key: `k:${i}`,
      handler: 'h',
      payload: { i },
      at: at + i,
    }));
    expect((await refusal(timers.scheduleMany(specs))).reason).toBe('duplicate-key');
    expect(await timers.get('k:0')).toBeNull();
    // a key twice in one call (the script's own check: no other call to compare with)
    expect((await refusal(timers.scheduleMany([specs[0], specs[1], specs[0]]))).reason).toBe('duplicate-key');
    expect(await timers.get('k:0')).toBeNull();
    await timers.cancel('k:3');
    const first = await timers.scheduleMany(specs, { requestId: 'plain' });
    expect(first.map((timer) => timer.dueAt)).toEqual(specs.map((spec) => spec.at));
    expect(await timers.scheduleMany(specs, { requestId: 'plain' })).toEqual(first);
    for (const timer of first) expect(await timers.get(timer.key)).toEqual(timer);
  });

  it('answers a mixed batch retried as the first time: plain one-shots among delays, intervals and kept rows', async () => {
    const timers = store.open();
    const kept = await timers.schedule({ key: 'kept', handler: 'h', delay: '2h' });
    const at = Date.now() + 3_600_000;
    const specs: TimerSpec[] = [
      { key: 'a', handler: 'h', at },
      { key: 'every', handler: 'h', every: '1h', maxRuns: 3, startAt: at }, // row fields before the next '@'
      { key: 'b', handler: 'h', payload: { b: 1 }, at: at + 1 },
      { key: 'kept', handler: 'h', at, ifExists: 'keep' },
      { key: 'later', handler: 'h', delay: '1h', meta: { m: 1 } },
      { key: 'c', handler: 'other', at: at + 2 },
    ];
    const first = await timers.scheduleMany(specs, { requestId: 'mixed' });
    expect(first.map((timer) => timer.dueAt)).toEqual([
      at,
      first[1].dueAt,
      at + 1,
      kept.dueAt,
      first[4].dueAt,
      at + 2,
    ]);
    expect(first[3]).toEqual(kept);
    const again = await timers.scheduleMany(specs, { requestId: 'mixed' });
    expect(again).toEqual(first);
    for (const timer of first) expect(await timers.get(timer.key)).toEqual(timer);
  });

  // a call of up to 4 specs compares their dues as it makes them; a larger one reads `due`'s first after
  it.each([0, 4])(
    'wakes the dispatchers once, with the earliest due, only when the batch goes before everything due (%i more specs a call)',
    async (more) => {
      const timers = store.open();
      const subscriber = store.raw.duplicate();
      const wakes: string[] = [];
      await subscriber.subscribe(`${timers.keys.base(0)}wake`);
      subscriber.on('message', (_channel, message: string) => wakes.push(message));
      try {
        const at = Date.now() + 3_600_000;
        let later = 0; // specs due after all the others, so they never are the earliest
        const call = (specs: TimerSpec[]) =>
          timers.scheduleMany([
            ...specs,
            ...Array.from({ length: more }, () => ({
              key: `l:${later}`,
              handler: 'h',
              at: at + 100 + later++,
            })),
          ]);
        await call([
          { key: 'x', handler: 'h', at: at + 10 },
          { key: 'y', handler: 'h', at: at + 5 },
        ]);
        await call([{ key: 'z', handler: 'h', at: at + 6 }]); // not before y: no wake
        await call([
          { key: 'w', handler: 'h', at: at + 8 },
          { key: 'v', handler: 'h', at: at + 1 },
        ]);
        await store.raw.ping(); // the subscriber's messages were sent before this answer
        await subscriber.ping();
        expect(wakes).toEqual([String(at + 5), String(at + 1)]);
      } finally {
        await subscriber.quit();
      }
    },
  );
});

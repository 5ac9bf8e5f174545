import { runScript } from '@sundial/redis';
import { commandCalls, eventually, useFirePath } from './fire-fixture';

const fire = useFirePath();

/**
 * What a single reschedule or cancel costs Redis (docs/design.md § Performance, "Churn p99"): the commands
 * it leaves out where the row tells it they change nothing, its event joined from texts, its row written
 * in place, its reply one JSON string. Counted by INFO commandstats on the suite's private Redis; what is
 * stored, published and answered stays as it was.
 */
describe('single writes: what a reschedule and a cancel send', () => {
  it('a reschedule of a one-shot in `due` writes its row in place: no DEL or ZREM, one EXISTS', async () => {
    const cluster = await fire.cluster();
    const { timers } = cluster;
    const due = (await cluster.redisNow()) + 3_600_000;
    const [timer] = await timers.scheduleMany([{ key: 'moved', handler: 'h', payload: { n: 1 }, at: due }]);

    await fire.raw.config('RESETSTAT');
    const moved = await timers.reschedule('moved', { at: due + 1_000 });
    // no ledger EXISTS (its LPUSH made the list), row DEL, `armed` ZREM (ZSCORE found none); the one
    // EXISTS is the call's look for a cancelAll's scope record (includes/scope-records.lua)
    expect(await commandCalls(fire.raw, 'exists')).toBe(1);
    expect(await commandCalls(fire.raw, 'del')).toBe(0);
    expect(await commandCalls(fire.raw, 'zrem')).toBe(0);
    expect([await commandCalls(fire.raw, 'hset'), await commandCalls(fire.raw, 'hdel')]).toEqual([1, 1]);

    expect(moved).toMatchObject({ key: 'moved', version: 2, dueAt: due + 1_000, payload: { n: 1 } });
    expect(await fire.raw.hgetall(timers.keys.row('moved'))).toEqual({
      id: timer.id,
      v: '2',
      sa: String(moved.scheduledAt),
      d: String(due + 1_000),
      h: 'h',
      p: '{"n":1}',
    });
    expect(await fire.raw.zscore(timers.keys.due(0), 'moved')).toBe(String(due + 1_000));
    expect(await fire.raw.lrange(timers.keys.ledger('moved'), 0, -1)).toEqual([
      `{"a":${moved.scheduledAt},"e":"rescheduled","v":2,"d":${due + 1_000}}`,
      `{"a":${timer.scheduledAt},"e":"scheduled","v":1}`,
    ]);
  });

  it('a row written in place drops what save_row dropped: a stored default, a pause, a delay', async () => {
    const { timers } = await fire.cluster();
    await timers.scheduleMany([
      { key: 'old', handler: 'h', delay: '1h' },
      { key: 'paused', handler: 'h', delay: '1h' },
      { key: 'every', handler: 'h', every: '1h' },
    ]);
    // a row as the release before the absent defaults wrote it (docs/design.md "Row values")
    await fire.raw.hset(timers.keys.row('old'), 'v', '1', 's', 'pending', 'k', 'once');
    await timers.pause('paused');

    await timers.reschedule('old', { at: Date.now() + 7_200_000 });
    await timers.reschedule('paused', { delay: '2h' });
    await timers.reschedule('every', { delay: '2h' });
    const fields = async (key: string) => Object.keys(await fire.raw.hgetall(timers.keys.row(key))).sort();
    expect(await fields('old')).toEqual(['d', 'h', 'id', 'sa', 'v']);
    expect(await fields('paused')).toEqual(['d', 'dm', 'h', 'id', 'sa', 'v']);
    expect(await fire.raw.hget(timers.keys.row('paused'), 'dm')).toBe('7200000');
    expect(await fields('every')).toEqual(['d', 'em', 'h', 'id', 'k', 'sa', 'v']);
    expect(await timers.get('paused')).toMatchObject({ status: 'pending', version: 3, delayMs: 7_200_000 });
  });

  it('a cancel of a one-shot in `due` sends no ZREM to `armed`; one handed off does', async () => {
    const cluster = await fire.cluster();
    const { timers } = cluster;
    const now = await cluster.redisNow();
    await timers.scheduleMany([
      { key: 'waiting', handler: 'h', at: now + 3_600_000 },
      { key: 'handed', handler: 'h', at: now + 60_000 },
    ]);
    expect((await cluster.commands.takeDue(0, 100, 120_000)).job?.timers.map((t) => t.key)).toEqual([
      'handed',
    ]);

    await fire.raw.config('RESETSTAT');
    expect(await timers.cancel('waiting')).toBe(true);
    // `due`, `keys`, `leases`
    expect(await commandCalls(fire.raw, 'zrem')).toBe(3);
    expect(await timers.cancel('handed')).toBe(true);
    expect(await commandCalls(fire.raw, 'zrem')).toBe(7);
    expect(await fire.raw.zcard(timers.keys.armed(0))).toBe(0);
    expect((await timers.history('handed')).map((entry) => entry.event)).toEqual([
      'cancelled',
      'armed',
      'scheduled',
    ]);
  });

  it('their events are joined from texts: a due of 16 digits exact, a key JSON escapes', async () => {
    const cluster = await fire.cluster();
    const { timers, events } = cluster;
    await timers.scheduleMany([
      { key: 'far', handler: 'h', delay: '1h' },
      { key: 'a/b@c', handler: 'h', delay: '1h' },
    ]);
    // cjson printed a number with %.14g: this due came out as 8.64e+15
    const far = await timers.reschedule('far', { at: 8_639_999_999_999_999 });
    const moved = await eventually(events, { type: 'scheduled', key: 'far', version: 2 });
    expect(moved).toEqual({
      type: 'scheduled',
      id: far.id,
      key: 'far',
      version: 2,
      kind: 'once',
      at: far.scheduledAt,
      due: 8_639_999_999_999_999,
      reason: 'reschedule',
    });
    const odd = await timers.reschedule('a/b@c', { delay: '2h' });
    expect(await eventually(events, { type: 'scheduled', key: 'a/b@c', version: 2 })).toMatchObject({
      due: odd.dueAt,
    });
    expect(await timers.cancel('a/b@c')).toBe(true);
    const cancelled = await eventually(events, { type: 'cancelled', key: 'a/b@c' });
    expect(cancelled).toEqual({
      type: 'cancelled',
      id: odd.id,
      key: 'a/b@c',
      version: 3,
      kind: 'once',
      at: expect.any(Number) as number,
      reason: 'cancelled',
    });
    expect(cancelled.at).toBeGreaterThanOrEqual(odd.scheduledAt);
  });

  it('a reschedule with a request replies its row as the JSON text it keeps; a repeat, that text marked again', async () => {
    const { timers } = await fire.cluster();
    await timers.schedule({ key: 'k', handler: 'h', delay: '1h' });
    const base = timers.keys.base(0);
    const argv1 = `#1#${timers.keys.prefix}\nreq-1\n60000`;
    const at = String(Date.now() + 7_200_000);
    const first = await runScript(fire.raw, 'reschedule', base, 50, argv1, 'k', 'at', at);
    expect(typeof first).toBe('string');
    const [code, ...pairs] = JSON.parse(first as string) as string[];
    expect(code).toBe('ok');
    expect(pairs).toEqual(expect.arrayContaining(['key', 'k', 'v', '2', 'd', at]));
    expect(await fire.raw.get(`${base}q:req-1`)).toBe(first);
    expect(await runScript(fire.raw, 'reschedule', base, 50, argv1, 'k', 'at', at)).toEqual(['again', first]);
    // a refusal is not kept, and comes as an array
    const gone = await runScript(
      fire.raw,
      'reschedule',
      base,
      50,
      `#1#${timers.keys.prefix}\nreq-2\n60000`,
      'x',
      'at',
      at,
    );
    expect(gone).toEqual(['not-found']);
  });

  it('a cancel clears its id by itself; the last id of a bitmap behind the counter drops it', async () => {
    const { timers } = await fire.cluster();
    await timers.scheduleMany([
      { key: 'a', handler: 'h', delay: '1h' },
      { key: 'b', handler: 'h', delay: '1h' },
    ]);
    await fire.raw.set(timers.keys.seq(0), 70_000);
    await timers.schedule({ key: 'c', handler: 'h', delay: '1h' });

    await fire.raw.config('RESETSTAT');
    expect(await timers.cancel('a')).toBe(true);
    // id 2 is set beside it: no BITCOUNT, the bitmap stays
    expect(await commandCalls(fire.raw, 'bitcount')).toBe(0);
    expect(await fire.raw.exists(timers.keys.idBitmap(0, '0:0'))).toBe(1);
    expect(await timers.cancel('b')).toBe(true);
    expect(await commandCalls(fire.raw, 'bitcount')).toBe(1);
    expect(await fire.raw.exists(timers.keys.idBitmap(0, '0:0'))).toBe(0);
    expect(await fire.raw.smembers(timers.keys.idChunks(0))).toEqual(['0:1']);
    expect(await timers.snapshot()).toEqual(['70001p0']);
  });
});

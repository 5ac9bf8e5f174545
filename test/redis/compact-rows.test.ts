import type { RedisTimers } from '@sundial/redis';
import { eventually, useFirePath } from './fire-fixture';

const fire = useFirePath();

/**
 * Rows leave `v` 1, `s` pending and `k` once out (docs/design.md "Row values"). The release before this
 * one wrote them and read them absent; so during a rolling upgrade each version meets rows of both
 * shapes, and every path must take both as pending one-shots of version 1.
 */
describe('rows that leave v 1, s pending and k once out', () => {
  const compact = (timers: RedisTimers, key: string) => fire.raw.hmget(timers.keys.row(key), 'v', 's', 'k');

  it('are what every write of a pending row leaves: schedule, reschedule, resume, an interval re-armed', async () => {
    const cluster = await fire.cluster();
    const { timers } = cluster;
    await timers.schedule({ key: 'once', handler: 'h', delay: '1h' });
    await timers.schedule({ key: 'tick', handler: 'h', every: '1h' });
    expect(await compact(timers, 'once')).toEqual([null, null, null]);
    expect(await compact(timers, 'tick')).toEqual([null, null, 'interval']);

    await timers.reschedule('once', { delay: '2h' });
    expect(await compact(timers, 'once')).toEqual(['2', null, null]);
    await timers.pause('once');
    expect(await compact(timers, 'once')).toEqual(['3', 'paused', null]);
    await timers.resume('once');
    expect(await compact(timers, 'once')).toEqual(['4', null, null]);
    expect(await timers.get('once')).toMatchObject({ version: 4, status: 'pending', kind: 'once' });

    // a run re-arms it (complete.lua): from running back to pending, `s` goes
    await timers.trigger('tick');
    await cluster.dispatcher();
    await cluster.runner({ h: () => undefined });
    await eventually(cluster.events, { type: 'completed', key: 'tick' });
    expect(await compact(timers, 'tick')).toEqual(['3', null, 'interval']);
    expect(await timers.get('tick')).toMatchObject({ version: 3, status: 'pending', runCount: 1 });
  });

  it('and rows the previous release wrote (with them) are read, listed, fired, moved and cancelled alike', async () => {
    const cluster = await fire.cluster();
    const { timers } = cluster;
    const created = await timers.scheduleMany(
      ['soon', 'later', 'moved', 'swept:a', 'swept:b'].map((key) => ({
        key,
        handler: 'h',
        delay: key === 'soon' ? 300 : '1h',
      })),
    );
    // half of them as the previous release wrote them: every path takes both shapes alike
    for (const timer of created.filter((_, i) => i % 2 === 0)) {
      await fire.raw.hset(timers.keys.row(timer.key), { v: '1', s: 'pending', k: 'once' });
    }

    expect(await timers.get('later')).toMatchObject({ version: 1, status: 'pending', kind: 'once' });
    expect(await timers.get('soon')).toMatchObject({ version: 1, status: 'pending', kind: 'once' });
    expect((await timers.list({ status: 'pending' })).items.map((timer) => timer.key)).toEqual([
      'later',
      'moved',
      'soon',
      'swept:a',
      'swept:b',
    ]);
    for (const timer of created) expect(await timers.check(timer.id)).toBe(true);

    expect(await timers.reschedule('moved', { delay: '2h' })).toMatchObject({
      version: 2,
      status: 'pending',
    });
    expect(await compact(timers, 'moved')).toEqual(['2', null, null]);
    expect(await timers.cancel('later')).toBe(true);
    expect(
      await timers.schedule({ key: 'later', handler: 'h', delay: '1h', ifExists: 'keep' }),
    ).toMatchObject({ status: 'cancelled', version: 2 });
    expect(await timers.cancelAll('swept:')).toBe(2);
    expect(await timers.check(created[3].id)).toBe(false);

    const ran: string[] = [];
    await cluster.dispatcher();
    await cluster.runner({ h: (_payload, ctx) => void ran.push(`${ctx.key} v${ctx.version}`) });
    await eventually(cluster.events, { type: 'completed', key: 'soon' });
    expect(ran).toEqual(['soon v1']);
    expect(await timers.check(created[0].id)).toBe(false);
    expect((await timers.history('soon')).map((entry) => entry.event)).toEqual([
      'completed',
      'claimed',
      'armed',
      'scheduled',
    ]);
  });
});

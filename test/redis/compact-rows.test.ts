import { eventually, useFirePath } from './fire-fixture';

const fire = useFirePath();

/**
 * Rows without `v` 1, `s` pending and `k` once, as the next release may write them (docs/design.md "Row
 * values": this one writes them, so that the release before it can still read its rows during a rolling
 * upgrade, and reads them absent, so that the next one can roll over it): every path takes them as that.
 */
describe('rows that leave v 1, s pending and k once out', () => {
  it('read, list, fire, cancel, reschedule and cancelAll them as pending one-shots of version 1', async () => {
    const cluster = await fire.cluster();
    const { timers } = cluster;
    const created = await timers.scheduleMany(
      ['soon', 'later', 'moved', 'swept:a', 'swept:b'].map((key) => ({
        key,
        handler: 'h',
        delay: key === 'soon' ? 300 : '1h',
      })),
    );
    for (const timer of created) {
      const row = timers.keys.row(timer.key);
      expect(await fire.raw.hmget(row, 'v', 's', 'k')).toEqual(['1', 'pending', 'once']);
      await fire.raw.hdel(row, 'v', 's', 'k');
    }

    expect(await timers.get('later')).toMatchObject({ version: 1, status: 'pending', kind: 'once' });
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

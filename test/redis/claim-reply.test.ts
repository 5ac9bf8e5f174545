import { runScript } from '@sundial/redis';
import { refOf, useFirePath } from './fire-fixture';

const fire = useFirePath();

/**
 * claim.lua replies a claimed row without what the worker has or derives (store/claim-reply.ts puts it
 * back): what the worker builds must be the row after the claim, as a read of the timer shows it.
 */
describe('the claimed row (claim.lua claimed_reply, store/claim-reply.ts)', () => {
  it('a held run: the worker’s row is the row after the claim, as stored', async () => {
    const cluster = await fire.cluster();
    const timer = await cluster.timers.schedule({
      key: 'held',
      handler: 'h',
      payload: { n: 1 },
      meta: { team: 'a' },
      delay: 0,
      retry: { attempts: 2 },
    });
    const [claim] = await cluster.commands.claim(0, 30_000, 'w "1"', [refOf(timer)]);
    if (claim.kind !== 'claimed') throw new Error(`not claimed: ${claim.kind}`);
    const running = await fire.raw.hgetall(cluster.timers.keys.row('held'));
    expect(claim.fields).toMatchObject({ key: 'held', rv: '1', s: 'running', hc: '1', lw: 'w "1"' });
    const { lq: _kept, lu: _until, ct: _token, ...wanted } = running;
    // the held run's version and runCount: stored only for a timer that does not await its task
    expect(claim.fields).toEqual({ ...wanted, key: 'held', k: 'once', v: '1', rv: '1', hc: '1' });
    expect(await cluster.timers.get('held')).toMatchObject({ status: 'running', runCount: 1 });
  });

  it('a held run’s reply leaves out its id and its `d` when that is its due; a trigger run’s keeps `d`', async () => {
    const cluster = await fire.cluster();
    const keys = cluster.timers.keys;
    const plain = await cluster.timers.schedule({ key: 'plain', handler: 'h', delay: 0 });
    const later = (await cluster.redisNow()) + 3_600_000;
    await cluster.timers.schedule({ key: 'triggered', handler: 'h', at: later });
    const triggered = await cluster.timers.trigger('triggered');
    const refs = [refOf(plain), refOf(triggered)];
    // claim.lua's own reply per timer: { 'held', due, leftUs, row JSON, kept }
    const args = [30_000, 'w-3', '0', 0, ...refs.flatMap((ref) => [ref.id, ref.key, ref.version])];
    const raw = (await runScript(
      fire.raw,
      'claim',
      keys.base(0),
      keys.ledgerSize,
      keys.prefix,
      ...args,
    )) as string[][];
    const sent = raw.map((reply) => JSON.parse(reply[3]) as Record<string, string>);
    expect(sent[0]).not.toHaveProperty('id');
    expect(sent[0]).not.toHaveProperty('d');
    expect(raw[0][1]).toBe(String(plain.dueAt));
    expect(sent[1]).not.toHaveProperty('id');
    expect(sent[1].d).toBe(String(later));
    expect(raw[1][1]).toBe(sent[1].tg);
  });

  it('the worker puts a held run’s id and `d` back: a trigger run’s `d` is its schedule’s, not the trigger', async () => {
    const cluster = await fire.cluster();
    const later = (await cluster.redisNow()) + 3_600_000;
    await cluster.timers.schedule({ key: 'poked', handler: 'h', at: later });
    const timer = await cluster.timers.trigger('poked');
    const [claim] = await cluster.commands.claim(0, 30_000, 'w-4', [refOf(timer)]);
    if (claim.kind !== 'claimed') throw new Error(`not claimed: ${claim.kind}`);
    const running = await fire.raw.hgetall(cluster.timers.keys.row('poked'));
    expect(running.d).toBe(String(later));
    const { lq: _kept, lu: _until, ct: _token, ...wanted } = running;
    expect(claim.fields).toEqual({ ...wanted, key: 'poked', k: 'once', rv: '2', hc: '1', lw: 'w-4' });
    expect(claim.due).toBe(Number(running.tg));
  });

  it('a free run (awaitTask false): the row after the claim, pending under the next version', async () => {
    const cluster = await fire.cluster();
    const timer = await cluster.timers.schedule({
      key: 'free',
      handler: 'h',
      every: 60_000,
      awaitTask: false,
    });
    await fire.raw.hset(cluster.timers.keys.row('free'), 'd', String(timer.dueAt - 60_000));
    await fire.raw.zadd(`${cluster.prefix}:{p0}:due`, timer.dueAt - 60_000, 'free');
    const [claim] = await cluster.commands.claim(0, 30_000, 'w-2', [
      { ...refOf(timer), due: timer.dueAt - 60_000 },
    ]);
    if (claim.kind !== 'claimed') throw new Error(`not claimed: ${claim.kind}`);
    expect(claim.mode).toBe('free');
    const row = await fire.raw.hgetall(cluster.timers.keys.row('free'));
    expect(claim.fields).toEqual({ ...row, key: 'free', k: 'interval', s: 'pending' });
    expect(claim.fields.l).toBe(`{"started":${row.lf},"status":"running"}`);
  });
});

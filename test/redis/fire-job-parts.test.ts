import { waitFor } from '@sundial/testing/harness';
import { commandCalls, useFirePath } from './fire-fixture';

const fire = useFirePath();

/**
 * One fire job carries the timers of up to five take-due calls of a dispatcher pass (docs/design.md
 * "Commands per fired timer"): each BullMQ job costs ~35 Redis commands, so a pass of 500 timers went as
 * 5 jobs before. Each call still takes at most `batchSize`, and each records its own hand-off.
 */
describe('fire path: a dispatcher pass fills one job from several take-due calls', () => {
  it('adds one job per five calls, each call recorded at its own hand-off ms under the job', async () => {
    const cluster = await fire.cluster();
    const past = (await cluster.redisNow()) - 1_000;
    const keys = Array.from({ length: 11 }, (_, i) => `k${i}`);
    await cluster.timers.scheduleMany(keys.map((key, i) => ({ key, handler: 'h', at: past + i })));
    const queue = cluster.queueOf('k0');

    await fire.raw.config('RESETSTAT');
    const dispatcher = await cluster.dispatcher({ batchSize: 2 });
    const jobs = await waitFor(
      async () => {
        const waiting = await queue.getWaiting();
        return waiting.flatMap((job) => job.data.timers).length === keys.length && waiting;
      },
      { what: 'the fire jobs of all 11 timers' },
    );
    // six take-due calls of 2 (the last takes 1): five fill one job, the sixth starts the next
    expect(await commandCalls(fire.raw, 'zremrangebyrank')).toBe(6);
    const byId = new Map(jobs.map((job) => [job.id, job.data.timers.map((ref) => ref.key)]));
    const [first, second] = [...byId.keys()].sort((a, b) => byId.get(b)!.length - byId.get(a)!.length);
    expect(byId.get(first!)).toEqual(keys.slice(0, 10));
    expect(byId.get(second!)).toEqual(keys.slice(10));
    // one BullMQ add per job: two, where one a call made six
    expect(await commandCalls(fire.raw, 'lpush')).toBe(2);

    // the reconciler finds every timer's job from its own hand-off ms, and keeps them all armed
    // (calls within one ms share their record: the same member at the same score)
    const records = await fire.raw.zrange(cluster.timers.keys.jobs(0), '0', '-1');
    expect(records.filter((record) => record.startsWith(`${first}@`)).length).toBeGreaterThan(0);
    expect(new Set(records.map((record) => record.split('@')[0]))).toEqual(new Set([first, second]));
    for (const key of keys) expect(await cluster.jobOf(key)).toBe(key === 'k10' ? second : first);
    expect(await cluster.reconciler({ graceMs: 0 }).reconcileOnce()).toMatchObject({ rearmed: 0 });
    expect(await fire.raw.zcard(cluster.timers.keys.armed(0))).toBe(keys.length);

    // the job gone, all its calls' hand-offs are armed again and their records dropped; the dispatcher
    // stopped first, as it would hand them off again at once, under the same job id and a new record
    // (it did while a reconcile pass, one round trip longer, had not answered yet)
    await dispatcher.close();
    await queue.remove(first!);
    expect(await cluster.reconciler({ graceMs: 0 }).reconcileOnce()).toMatchObject({ rearmed: 10 });
    expect(await fire.raw.zrange(cluster.timers.keys.jobs(0), '0', '-1')).toEqual([second]);
  });
});

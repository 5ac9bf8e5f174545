import { waitFor } from '@sundial/testing/harness';
import { commandCalls, eventually, useFirePath } from './fire-fixture';

const fire = useFirePath();

describe('fire path: hand-off to BullMQ and batched completion', () => {
  it('take-due takes up to its limit as one job, records it at its hand-off and writes no row', async () => {
    const cluster = await fire.cluster();
    const past = (await cluster.redisNow()) - 1_000;
    const keys = Array.from({ length: 7 }, (_, i) => `k${i}`);
    await cluster.timers.scheduleMany(keys.map((key, i) => ({ key, handler: 'h', at: past + i })));
    const keysOf = (taken: { job?: { timers: { key: string }[] } }) =>
      taken.job?.timers.map((ref) => ref.key);

    await fire.raw.config('RESETSTAT');
    const taken = await cluster.commands.takeDue(0, 3, 0);
    // more was due than the call takes: its next due came with the same read (no ZRANGE)
    expect(await commandCalls(fire.raw, 'zrange')).toBe(0);

    expect(keysOf(taken)).toEqual(['k0', 'k1', 'k2']);
    const { jobId, timers } = taken.job!;
    expect(jobId).toBe(`t-${timers[0].id}-v1-r0`);
    for (const ref of timers) {
      // the row names no job and keeps no entry: its `armed` one is implied (includes/ledger.lua)
      expect(await fire.raw.hmget(cluster.timers.keys.row(ref.key), 'j', 'lq')).toEqual([null, null]);
    }
    const jobs = `${cluster.timers.keys.base(0)}jobs`;
    expect(await fire.raw.zrange(jobs, '0', '-1', 'WITHSCORES')).toEqual([jobId, String(taken.now)]);
    expect(taken.nextDue).toBe(past + 3);
    expect(await fire.raw.zcard(cluster.timers.keys.armed(0))).toBe(3);

    // a call given the dispatcher's open job extends it: recorded as a member of its own, at its hand-off
    const more = await cluster.commands.takeDue(0, 3, 0, jobId);
    expect(more.job?.jobId).toBe(jobId);
    expect(keysOf(more)).toEqual(['k3', 'k4', 'k5']);
    expect(await fire.raw.zscore(jobs, `${jobId}@${more.now}`)).toBe(String(more.now));
    expect(await fire.raw.zrange(cluster.timers.keys.due(0), 0, '-1')).toEqual(['k6']);

    // what is left fits in one call: the next due beyond it is read (none here)
    await fire.raw.config('RESETSTAT');
    const rest = await cluster.commands.takeDue(0, 3, 0);
    expect(keysOf(rest)).toEqual(['k6']);
    expect(rest.nextDue).toBeNull();
    expect(await commandCalls(fire.raw, 'zrange')).toBe(1);
  });

  it('take-due takes a timer within the lead before its due, and none beyond it', async () => {
    const cluster = await fire.cluster();
    // Both calls must land before the due, however slow a loaded host's round trips: 4 s ahead.
    const soon = await cluster.timers.schedule({ key: 'soon', handler: 'h', delay: 4_000 });
    const later = await cluster.timers.schedule({ key: 'later', handler: 'h', delay: '1h' });

    expect((await cluster.commands.takeDue(0, 100, 0)).job).toBeUndefined();
    const taken = await cluster.commands.takeDue(0, 100, 8_000);

    expect(taken.job!.timers).toEqual([{ id: soon.id, key: 'soon', version: 1, due: soon.dueAt }]);
    expect(taken.now).toBeLessThan(soon.dueAt);
    expect(taken.nextDue).toBe(later.dueAt);
  });

  it('a dispatcher with a lead hands a timer over before its due, and the run still never starts early', async () => {
    const cluster = await fire.cluster();
    // Within the lead at once: the hand-off comes on the schedule's wake, which a loaded host may take a
    // second or two to act on, so the due is 3 s away.
    await cluster.dispatcher({ leadMs: 4_000 });
    const timer = await cluster.timers.schedule({ key: 'k', handler: 'h', delay: 3_000 });

    // The `armed` score is the hand-off time (Redis now at take-due).
    const handedOverAt = await waitFor(
      async () => (await fire.raw.zscore(cluster.timers.keys.armed(0), 'k')) ?? undefined,
      { what: 'hand-off' },
    );
    expect(Number(handedOverAt)).toBeLessThan(timer.dueAt);
    const jobs = `${cluster.timers.keys.base(0)}jobs`;
    expect(await fire.raw.zrangebyscore(jobs, handedOverAt, handedOverAt)).toEqual([`t-${timer.id}-v1-r0`]);

    // A runner drops a job due more than 1 s ahead (due-claims.ts): this one comes once the job is due
    // within half a second, and holds it until the due.
    await waitFor(async () => (await cluster.redisNow()) >= timer.dueAt - 500, {
      what: 'the due near', // deadline: ~2.5 s on Redis's clock
    });
    const starts: number[] = [];
    await cluster.runner({ h: () => void starts.push(Date.now()) });
    const running = await eventually(cluster.events, { type: 'running', key: 'k' });
    expect(running.at).toBeGreaterThanOrEqual(timer.dueAt);
    await eventually(cluster.events, { type: 'completed', key: 'k' });
    expect(starts).toHaveLength(1);
  });

  it('records any error text a handler throws, quotes, non-ASCII and a lone surrogate included', async () => {
    const cluster = await fire.cluster();
    const message = 'bad "row" \\ in ünïcødé 🎉 \ud800 end';
    await cluster.dispatcher();
    await cluster.runner({
      boom: () => {
        throw Object.assign(new Error(message), { reason: 'odd' });
      },
    });
    await cluster.timers.schedule({ key: 'k', handler: 'boom', delay: 0, removeOnComplete: false });

    const failed = await eventually(cluster.events, { type: 'failed', key: 'k' });

    // A lone surrogate cannot travel as UTF-8: it arrives as U+FFFD, as any string argument would.
    const recorded = message.replace('\ud800', '\ufffd');
    expect(failed.error).toEqual({ message: recorded, reason: 'odd' });
    expect((await cluster.timers.get('k'))!.last).toMatchObject({
      error: { message: recorded, reason: 'odd' },
    });
  });
});

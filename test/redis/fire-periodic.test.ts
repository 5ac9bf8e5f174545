import { cronFollowUp } from '@sundial/redis';
import type { Timer } from '@sundial/core';
import { waitFor } from '@sundial/testing';
import { eventually, type FireCluster, gate, matching, recorder, refOf, useFirePath } from './fire-fixture';

const fire = useFirePath();

describe('fire path: intervals', () => {
  it('awaitTask true: each run arms the next grid slot, and maxRuns completes the timer', async () => {
    const cluster = await fire.cluster();
    const tick = recorder();
    await cluster.dispatcher();
    await cluster.runner({ tick: tick.handler });
    const timer = await cluster.timers.schedule({ key: 'beat', handler: 'tick', every: 100, maxRuns: 3 });
    await eventually(cluster.events, { type: 'completed', key: 'beat', version: 3 });
    expect(tick.calls.map((ctx) => [ctx.version, ctx.runCount])).toEqual([
      [1, 1],
      [2, 2],
      [3, 3],
    ]);
    // Every due is on the grid anchored at scheduledAt, and runs never overlap.
    for (const ctx of tick.calls) expect((ctx.due - timer.scheduledAt) % 100).toBe(0);
    expect(await cluster.timers.get('beat')).toBeNull();
  });

  it('awaitTask true: a run that throws ends the interval as failed', async () => {
    const cluster = await fire.cluster();
    await cluster.dispatcher();
    await cluster.runner({ flaky: () => Promise.reject(new Error('down')) });
    await cluster.timers.schedule({ key: 'k', handler: 'flaky', every: 100, removeOnComplete: false });
    await eventually(cluster.events, { type: 'failed', key: 'k' });
    const row = await cluster.timers.get('k');
    expect(row).toMatchObject({
      status: 'failed',
      runCount: 1,
      version: 1,
      last: { status: 'failed', error: { message: 'down' } },
    });
    expect(await cluster.timers.check(row!.id)).toBe(false);
  });

  it('awaitTask false continues ticking after task failure', async () => {
    const cluster = await fire.cluster();
    await cluster.dispatcher();
    await cluster.runner({ ping: () => Promise.reject(new Error('no reply')) });
    const timer = await cluster.timers.schedule({
      key: 'ping',
      handler: 'ping',
      every: 100,
      awaitTask: false,
    });
    await waitFor(() => matching(cluster.events, { type: 'failed', key: 'ping' }).length >= 3, {
      what: '3 failures',
    });
    const row = await cluster.timers.get('ping');
    expect(row).toMatchObject({ id: timer.id, status: 'pending' });
    expect(row!.runCount).toBeGreaterThanOrEqual(3);
    expect(row!.lastErrorAt).not.toBeNull();
  });

  it('awaitTask false: the next tick runs while the previous run is still going', async () => {
    const cluster = await fire.cluster();
    const first = gate();
    const tick = recorder((_ctx, call) => (call === 1 ? first.promise : undefined));
    await cluster.dispatcher();
    await cluster.runner({ tick: tick.handler });
    await cluster.timers.schedule({ key: 'k', handler: 'tick', every: 100, awaitTask: false, maxRuns: 3 });
    // Runs 2 and 3 start (and the timer completes with run 3) while run 1 is held open.
    await eventually(cluster.events, { type: 'completed', key: 'k', version: 3 });
    expect(tick.calls.map((ctx) => ctx.runCount)).toEqual([1, 2, 3]);
    expect(await cluster.timers.get('k')).toBeNull();
    first.open();
    // Run 1 finishes last; its entry is gone, so its completion is stale and changes nothing.
    await eventually(cluster.events, { type: 'stale', key: 'k', version: 1 });
    expect(matching(cluster.events, { type: 'completed', key: 'k', version: 1 })).toEqual([]);
  });

  it('trigger runs a pending interval now without moving its schedule', async () => {
    const cluster = await fire.cluster();
    const tick = recorder();
    await cluster.dispatcher();
    await cluster.runner({ tick: tick.handler });
    const timer = await cluster.timers.schedule({ key: 'k', handler: 'tick', every: '1h' });
    await cluster.timers.trigger('k');
    await eventually(cluster.events, { type: 'completed', key: 'k' });
    expect(tick.calls).toHaveLength(1);
    const row = await cluster.timers.get('k');
    expect(row).toMatchObject({ status: 'pending', dueAt: timer.dueAt, runCount: 1, version: 3 });
  });
});

describe('fire path: cron', () => {
  it('runs a six-field cron on whole seconds until maxRuns', async () => {
    const cluster = await fire.cluster();
    const tick = recorder();
    await cluster.dispatcher();
    await cluster.runner({ tick: tick.handler });
    await cluster.timers.schedule({ key: 'c', handler: 'tick', cron: '* * * * * *', tz: 'UTC', maxRuns: 2 });
    await eventually(cluster.events, { type: 'completed', key: 'c', version: 2 });
    expect(tick.calls.map((ctx) => ctx.due % 1000)).toEqual([0, 0]);
    expect(tick.calls[1].due - tick.calls[0].due).toBe(1000);
    expect(await cluster.timers.get('c')).toBeNull();
  });

  it('a cron run that throws keeps the schedule', async () => {
    const cluster = await fire.cluster();
    await cluster.dispatcher();
    await cluster.runner({ boom: () => Promise.reject(new Error('bad day')) });
    await cluster.timers.schedule({ key: 'c', handler: 'boom', cron: '* * * * * *', tz: 'UTC' });
    await eventually(cluster.events, { type: 'failed', key: 'c' });
    await waitFor(async () => (await cluster.timers.get('c'))?.status === 'pending', { what: 'rearmed' });
    const row = await cluster.timers.get('c');
    expect(row).toMatchObject({ version: 2, last: { status: 'failed' } });
    expect(row!.dueAt % 1000).toBe(0);
  });

  it('reports the slots a run overlapped as skipped', async () => {
    const cluster = await fire.cluster();
    const timer = await cluster.timers.schedule({ key: 'c', handler: 'h', cron: '* * * * * *', tz: 'UTC' });
    await waitFor(async () => (await cluster.redisNow()) >= timer.dueAt, { intervalMs: 5, what: 'due' });
    const [claim] = await cluster.commands.claim(0, 30_000, 'w', [
      { id: timer.id, key: 'c', version: 1, due: timer.dueAt },
    ]);
    expect(claim.kind).toBe('claimed');
    const started = timer.dueAt;
    // As if the run had lasted 3.5 s: the slots at +1 s, +2 s and +3 s passed while it ran.
    const followUp = cronFollowUp({ k: 'cron', cr: '* * * * * *', tz: 'UTC' }, started, started + 3500);
    expect(followUp).toEqual({ cronNext: started + 4000, skipped: 3 });
    const [result] = await cluster.commands.complete(0, [
      { id: timer.id, key: 'c', version: 1, runCount: 1, mode: 'held', outcome: 'ok', ...followUp },
    ]);
    expect(result).toBe('done');
    expect(await eventually(cluster.events, { type: 'skipped', key: 'c' })).toMatchObject({
      reason: 'overlap',
      count: 3,
    });
    expect(await cluster.timers.get('c')).toMatchObject({
      status: 'pending',
      version: 2,
      dueAt: started + 4000,
    });
  });

  it('counts the slots that passed before a late run from its due, as the engine does', async () => {
    const cluster = await fire.cluster();
    const tick = recorder();
    await cluster.dispatcher();
    const timer = await cluster.timers.schedule({
      key: 'c',
      handler: 'tick',
      cron: '* * * * * *',
      tz: 'UTC',
    });
    // No worker until two more slots have passed (an outage): the run that comes is for the first.
    await waitFor(async () => (await cluster.redisNow()) >= timer.dueAt + 2_100, {
      intervalMs: 20,
      what: 'late',
    });
    await cluster.runner({ tick: tick.handler });
    const skipped = await eventually(cluster.events, { type: 'skipped', key: 'c' });
    expect(tick.calls[0].due).toBe(timer.dueAt);
    expect(skipped).toMatchObject({ reason: 'overlap', version: 1 });
    expect(skipped.count).toBeGreaterThanOrEqual(2);
  });

  it('counts no skip for a trigger run or a final run, which no skipped event would show', () => {
    const fields = { k: 'cron', cr: '* * * * * *', tz: 'UTC', rc: '2' };
    const due = Date.parse('2026-06-01T00:00:00Z');
    expect(cronFollowUp(fields, due, due + 3500)).toEqual({ cronNext: due + 4000, skipped: 3 });
    expect(cronFollowUp({ ...fields, tg: String(due) }, due, due + 3500)).toEqual({ skipped: 0 });
    expect(cronFollowUp({ ...fields, mr: '2' }, due, due + 3500)).toEqual({ skipped: 0 });
    expect(cronFollowUp({ ...fields, mr: '3' }, due, due + 3500)).toMatchObject({ skipped: 3 });
  });

  it('a live cron goes on past a gap of more than 4 years (2096-02-29, then 2104-02-29)', async () => {
    const cluster = await fire.cluster();
    const timer = await cluster.timers.schedule({ key: 'leap', handler: 'h', cron: '0 0 29 2 *', tz: 'UTC' });
    await claimNow(cluster, timer);
    const due = Date.parse('2096-02-29T00:00:00Z');
    // As if this run were the one of 2096, ending a second later.
    const followUp = cronFollowUp({ k: 'cron', cr: '0 0 29 2 *', tz: 'UTC', rc: '1' }, due, due + 1000);
    expect(followUp).toEqual({ cronNext: Date.parse('2104-02-29T00:00:00Z'), skipped: 0 });
    await cluster.commands.complete(0, [
      { id: timer.id, key: 'leap', version: 1, runCount: 1, mode: 'held', outcome: 'ok', ...followUp },
    ]);
    expect(await cluster.timers.get('leap')).toMatchObject({ status: 'pending', dueAt: followUp.cronNext });
  });

  it('a live cron with no slot left ends visibly: its event says no-next-slot', async () => {
    const cluster = await fire.cluster();
    const timer = await cluster.timers.schedule({
      key: 'leap',
      handler: 'h',
      cron: '0 0 29 2 *',
      tz: 'UTC',
      removeOnComplete: false,
    });
    await claimNow(cluster, timer);
    const lastLeapDay = Date.UTC(275760, 1, 29);
    const followUp = cronFollowUp(
      { k: 'cron', cr: '0 0 29 2 *', tz: 'UTC', rc: '1' },
      lastLeapDay,
      lastLeapDay + 1000,
    );
    expect(followUp).toEqual({ skipped: 0 });
    const [result] = await cluster.commands.complete(0, [
      { id: timer.id, key: 'leap', version: 1, runCount: 1, mode: 'held', outcome: 'ok', ...followUp },
    ]);
    expect(result).toBe('done');
    expect(await eventually(cluster.events, { type: 'completed', key: 'leap' })).toMatchObject({
      reason: 'no-next-slot',
    });
    expect(await cluster.timers.get('leap')).toMatchObject({ status: 'completed', last: { status: 'ok' } });
  });
});

/** Claims a cron timer's run now: its row made due behind the runtime's back (its slot is years away). */
async function claimNow(cluster: FireCluster, timer: Timer): Promise<void> {
  await fire.raw.hset(cluster.timers.keys.row(timer.key), 'd', String(await cluster.redisNow()));
  const [claim] = await cluster.commands.claim(0, 30_000, 'w', [refOf(timer)]);
  expect(claim.kind).toBe('claimed');
}

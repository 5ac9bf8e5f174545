import type { Timer } from '@sundial/core';
import { cronDetach, cronFollowUp } from '@sundial/redis';
import { waitFor } from '@sundial/testing/harness';
import { ClusterClock } from '../../libs/redis/src/infra/cluster-clock';
import { eventually, type FireCluster, recorder, refOf, useFirePath } from './fire-fixture';

const fire = useFirePath();

/* Interval and cron semantics run on both backends in test/conformance; this is the Redis-only cron path. */
describe('fire path: cron', () => {
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
    expect(followUp).toEqual({ cronNext: started + 4000, missed: 0, overlap: 3 });
    const [result] = await cluster.commands.complete(0, [
      { id: timer.id, key: 'c', version: 1, runCount: 1, mode: 'held', outcome: 'ok', ...followUp },
    ]);
    expect(result).toEqual({ kind: 'done', missed: 0, overlap: 3 });
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

  it('runs each slot once when the worker clock stands behind Redis by less than the claim-ahead', async () => {
    // A ClusterClock estimate 3 ms behind (a TIME midpoint floored to the ms, a round trip slow one way):
    // the claim, 5 ms ahead, is answered with the due still to come, and the run starts when that bound
    // says it came; an instant handler then ends 3 ms "before" its slot by the estimate. Without
    // cronFollowUp counting from the start, its next slot was the same slot: every slot ran twice.
    const now = ClusterClock.prototype.now;
    const behind = jest.spyOn(ClusterClock.prototype, 'now').mockImplementation(function (
      this: ClusterClock,
    ) {
      return now.call(this) - 3;
    });
    try {
      const cluster = await fire.cluster();
      const tick = recorder();
      await cluster.dispatcher();
      await cluster.runner({ tick: tick.handler });
      const timer = await cluster.timers.schedule({
        key: 'c',
        handler: 'tick',
        cron: '* * * * * *',
        tz: 'UTC',
      });
      // deadline: three every-second slots and the hand-off of the third
      await waitFor(async () => (await cluster.redisNow()) >= timer.dueAt + 2_300, {
        intervalMs: 50,
        what: 'three slots',
      });
      const dues = tick.calls.map((ctx) => ctx.due);
      expect(dues.length).toBeGreaterThanOrEqual(3);
      expect(dues).toEqual([...new Set(dues)]);
    } finally {
      behind.mockRestore();
    }
  });

  it('splits the slots a run went past at its start: missed before, overlap during', () => {
    const due = Date.parse('2026-06-01T00:00:00Z');
    // Started 2.5 s late (slots +1 s, +2 s missed), ended 2 s later (+3 s, +4 s overlapped).
    const fields = { k: 'cron', cr: '* * * * * *', tz: 'UTC', lf: String(due + 2500) };
    expect(cronFollowUp(fields, due, due + 4500)).toEqual({ cronNext: due + 5000, missed: 2, overlap: 2 });
  });

  it('counts the slots that passed before a late run as missed, from its due, as the engine does', async () => {
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
    expect(skipped).toMatchObject({ reason: 'missed', version: 1 });
    expect(skipped.count).toBeGreaterThanOrEqual(2);
  });

  it('counts no skip for a trigger run or a final run, which no skipped event would show', () => {
    const fields = { k: 'cron', cr: '* * * * * *', tz: 'UTC', rc: '2' };
    const due = Date.parse('2026-06-01T00:00:00Z');
    const none = { missed: 0, overlap: 0 };
    expect(cronFollowUp(fields, due, due + 3500)).toEqual({ cronNext: due + 4000, missed: 0, overlap: 3 });
    expect(cronFollowUp({ ...fields, tg: String(due) }, due, due + 3500)).toEqual(none);
    expect(cronFollowUp({ ...fields, mr: '2' }, due, due + 3500)).toEqual(none);
    expect(cronFollowUp({ ...fields, mr: '3' }, due, due + 3500)).toMatchObject({ overlap: 3 });
  });

  it('a live cron goes on past a gap of more than 4 years (2096-02-29, then 2104-02-29)', async () => {
    const cluster = await fire.cluster();
    const timer = await cluster.timers.schedule({ key: 'leap', handler: 'h', cron: '0 0 29 2 *', tz: 'UTC' });
    await claimNow(cluster, timer);
    const due = Date.parse('2096-02-29T00:00:00Z');
    // As if this run were the one of 2096, ending a second later.
    const followUp = cronFollowUp({ k: 'cron', cr: '0 0 29 2 *', tz: 'UTC', rc: '1' }, due, due + 1000);
    expect(followUp).toEqual({ cronNext: Date.parse('2104-02-29T00:00:00Z'), missed: 0, overlap: 0 });
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
    expect(followUp).toEqual({ missed: 0, overlap: 0 });
    const [result] = await cluster.commands.complete(0, [
      { id: timer.id, key: 'leap', version: 1, runCount: 1, mode: 'held', outcome: 'ok', ...followUp },
    ]);
    expect(result).toEqual({ kind: 'done', missed: 0, overlap: 0 });
    expect(await eventually(cluster.events, { type: 'completed', key: 'leap' })).toMatchObject({
      reason: 'no-next-slot',
    });
    expect(await cluster.timers.get('leap')).toMatchObject({ status: 'completed', last: { status: 'ok' } });
  });
});

/** Claims a cron timer's run now: its row made due behind the runtime's back (its slot is years away). */
/* The run policies' Redis-only parts (docs/design.md "Run policies"); their behaviour runs on both backends in
 * test/conformance/run-policies.test.ts. */
describe('fire path: cron run policies', () => {
  const due = Date.parse('2026-06-01T00:00:00Z');
  const cron = { k: 'cron', cr: '* * * * * *', tz: 'UTC', rc: '1', lf: String(due) };

  it("buffer-one keeps the first slot the run overlapped and counts a buffered run's skips after `cf`", () => {
    expect(cronFollowUp({ ...cron, ov: 'b' }, due, due + 3500)).toEqual({
      cronNext: due + 1000,
      missed: 0,
      overlap: 2,
      buffered: true,
    });
    // The buffered slot's run (due +1 s) started at +3.5 s, when the run before it ended: from there on.
    const buffered = { ...cron, ov: 'b', cf: String(due + 3500), lf: String(due + 3500) };
    expect(cronFollowUp(buffered, due + 1000, due + 3600)).toEqual({
      cronNext: due + 4000,
      missed: 0,
      overlap: 0,
    });
  });

  it('cronDetach: the next slot and the missed ones for allow/cancel-other, nothing for held runs', () => {
    const allow = { ...cron, aw: '0', lf: String(due + 2500) };
    expect(cronDetach(allow, due)).toEqual({ next: due + 3000, missed: 2 });
    expect(cronDetach({ ...cron, lf: allow.lf }, due)).toBeNull();
    expect(cronDetach({ ...allow, tg: String(due) }, due)).toBeNull();
    expect(cronDetach({ ...allow, mr: '1' }, due)).toBeNull();
  });

  it('detach turns a held cron run free and arms the next slot; a repeated detach answers the same', async () => {
    const cluster = await fire.cluster();
    const timer = await cluster.timers.schedule({
      key: 'c',
      handler: 'h',
      cron: '* * * * * *',
      tz: 'UTC',
      overlap: 'allow',
    });
    await claimNow(cluster, timer);
    const run = { key: 'c', version: 1, runCount: 1 };
    const next = timer.dueAt + 60_000;
    expect(await cluster.commands.detach(0, 'w', run, next, 0)).toBe(true);
    expect(await cluster.commands.detach(0, 'w', run, next, 0)).toBe(true);
    expect(await cluster.commands.detach(0, 'other', run, next, 0)).toBe(false);
    expect(await cluster.timers.get('c')).toMatchObject({
      status: 'pending',
      version: 2,
      dueAt: next,
      overlap: 'allow',
    });
    // back to pending: `s` is left out (docs/design.md "Row values")
    expect(await fire.raw.hget(cluster.timers.keys.row('c'), 's')).toBeNull();
    const [done] = await cluster.commands.complete(0, [
      { id: timer.id, key: 'c', version: 1, runCount: 1, mode: 'free', outcome: 'ok', missed: 0, overlap: 0 },
    ]);
    expect(done).toEqual({ kind: 'done', missed: 0, overlap: 0 });
    expect(await cluster.timers.get('c')).toMatchObject({
      status: 'pending',
      version: 2,
      last: { status: 'ok' },
    });
  });
});

async function claimNow(cluster: FireCluster, timer: Timer): Promise<void> {
  await fire.raw.hset(cluster.timers.keys.row(timer.key), 'd', String(await cluster.redisNow()));
  const [claim] = await cluster.commands.claim(0, 30_000, 'w', [refOf(timer)]);
  expect(claim.kind).toBe('claimed');
}

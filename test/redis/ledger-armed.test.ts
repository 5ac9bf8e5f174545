import { silentLogger } from '@sundial/core';
import { RedisTimers } from '@sundial/redis';
import { waitFor } from '@sundial/testing/harness';
import { story, useFirePath } from './fire-fixture';

const fire = useFirePath();

/**
 * take-due writes nothing on a row: its `armed` entry is implied by the row being in `armed` (scored by
 * the hand-off ms) and folded into the ledger by whatever writes it or takes the row out of `armed`
 * (includes/ledger.lua ledger_fold_armed). Each hand-off must still be in history exactly once, in order.
 */
describe('ledger: the implied `armed` entry of a hand-off', () => {
  it('a stale claim while the row waits in `armed` again writes that hand-off once, before the stale entry', async () => {
    const cluster = await fire.cluster();
    const timer = await cluster.timers.schedule({ key: 'k', handler: 'h', delay: 0 });
    const firstTake = await cluster.commands.takeDue(0, 100, 1_000);
    const first = firstTake.job!;
    await cluster.timers.reschedule('k', { delay: 0 });
    const second = await cluster.commands.takeDue(0, 100, 1_000);
    const job = second.job!;
    expect(job.timers[0]).toMatchObject({ key: 'k', version: 2 });
    await waitFor(async () => (await cluster.redisNow()) >= job.timers[0].due, {
      intervalMs: 5,
      what: 'due',
    });

    const [stale] = await cluster.commands.claim(0, 30_000, 'w', first.timers);
    expect(stale).toMatchObject({ kind: 'stale', reason: 'version' });
    // written, and the row still armed: its score says so
    expect(await fire.raw.zscore(cluster.timers.keys.armed(0), 'k')).toBe(`${second.now}.5`);
    const [claimed] = await cluster.commands.claim(0, 30_000, 'w', job.timers);
    expect(claimed.kind).toBe('claimed');
    await cluster.commands.complete(0, [
      { id: timer.id, key: 'k', version: 2, runCount: 1, missed: 0, overlap: 0, mode: 'held', outcome: 'ok' },
    ]);

    const history = await cluster.timers.history('k');
    expect(story(history)).toEqual([
      ['scheduled', 1],
      ['armed', 1],
      ['rescheduled', 2],
      ['armed', 2],
      ['stale', 1, 'version'],
      ['claimed', 2],
      ['completed', 2],
    ]);
    const armed = history.filter((entry) => entry.event === 'armed');
    expect(armed.map((entry) => Date.parse(entry.at))).toEqual([second.now, firstTake.now]);
  });

  it('a hand-off the reconciler re-arms (its job gone) stays in history, and the next one follows it', async () => {
    const cluster = await fire.cluster();
    const timer = await cluster.timers.schedule({ key: 'lost', handler: 'h', delay: 0 });
    const taken = await cluster.commands.takeDue(0, 100, 1_000);
    const jobs = `${cluster.timers.keys.base(0)}jobs`;
    expect(await fire.raw.zrange(jobs, '0', '-1')).toEqual([taken.job!.jobId]);
    // no BullMQ job was added: the hand-off is lost
    expect(await cluster.reconciler({ graceMs: 0 }).reconcileOnce()).toMatchObject({ rearmed: 1 });
    expect(await fire.raw.zscore(cluster.timers.keys.due(0), 'lost')).not.toBeNull();
    // the record of a job gone whose hand-off left nothing in `armed` goes
    expect(await fire.raw.zrange(jobs, '0', '-1')).toEqual([]);
    expect(story(await cluster.timers.history('lost'))).toEqual([
      ['scheduled', 1],
      ['armed', 1],
    ]);

    const again = await cluster.commands.takeDue(0, 100, 1_000);
    expect(story(await cluster.timers.history('lost'))).toEqual([
      ['scheduled', 1],
      ['armed', 1],
      ['armed', 1],
    ]);
    const [claimed] = await cluster.commands.claim(0, 30_000, 'w', again.job!.timers);
    expect(claimed.kind).toBe('claimed');
    await cluster.commands.complete(0, [
      {
        id: timer.id,
        key: 'lost',
        version: 1,
        runCount: 1,
        missed: 0,
        overlap: 0,
        mode: 'held',
        outcome: 'ok',
      },
    ]);
    const history = await cluster.timers.history('lost');
    expect(story(history)).toEqual([
      ['scheduled', 1],
      ['armed', 1],
      ['armed', 1],
      ['claimed', 1],
      ['completed', 1],
    ]);
    expect(Date.parse(history[2].at)).toBe(again.now);
    expect(Date.parse(history[3].at)).toBe(taken.now);
  });

  it('a reconciler pass leaves a hand-off alone while a job recorded at its ms exists', async () => {
    const cluster = await fire.cluster();
    await cluster.timers.schedule({ key: 'kept', handler: 'h', delay: 0 });
    const taken = await cluster.commands.takeDue(0, 100, 1_000);
    await cluster.queueOf('kept').add('fire', { timers: taken.job!.timers }, { jobId: taken.job!.jobId });
    expect(await cluster.reconciler({ graceMs: 0 }).reconcileOnce()).toMatchObject({ rearmed: 0 });
    expect(await fire.raw.zscore(cluster.timers.keys.armed(0), 'kept')).toBe(String(taken.now));
    expect(await cluster.jobOf('kept')).toBe(taken.job!.jobId);
  });

  it('pass-late of a late slot keeps the hand-off it takes out of `armed`', async () => {
    const cluster = await fire.cluster();
    const timer = await cluster.timers.schedule({
      key: 'late',
      handler: 'h',
      every: '200ms',
      catchup: 'skip',
    });
    await waitFor(async () => (await cluster.redisNow()) >= timer.dueAt, { intervalMs: 5, what: 'due' });
    const taken = await cluster.commands.takeDue(0, 100, 1_000);
    const [reply] = await cluster.commands.claim(0, 30_000, 'w', taken.job!.timers);
    expect(reply.kind).toBe('check');
    const ref = taken.job!.timers[0];
    expect(await cluster.commands.passLate(0, ref, { next: timer.dueAt + 200, missed: 0 })).toBe(true);
    expect(await fire.raw.zscore(cluster.timers.keys.due(0), 'late')).toBe(String(timer.dueAt + 200));
    expect(story(await cluster.timers.history('late'))).toEqual([
      ['scheduled', 1],
      ['armed', 1],
    ]);
  });

  it('every history limit gives the newest entries of the whole, hand-offs among them, whatever the ledger size', async () => {
    const cluster = await fire.cluster();
    for (const ledger of [50, 3]) {
      const timers = new RedisTimers({
        connection: fire.url(),
        prefix: cluster.prefix,
        logger: silentLogger,
        ledger,
      });
      const key = `pages:${ledger}`;
      await timers.schedule({ key, handler: 'h', delay: 0 });
      await cluster.commands.takeDue(0, 100, 1_000); // armed, not claimed: its entry implied, the newest
      await timers.pause(key);
      await timers.resume(key);
      await timers.reschedule(key, { delay: 0 });
      await cluster.commands.takeDue(0, 100, 1_000);
      const whole = await timers.history(key, { limit: 200 });
      expect(story(whole).at(-1)).toEqual(['armed', 4]);
      expect(whole.length).toBe(Math.min(ledger, 6));
      for (let limit = 1; limit <= whole.length + 1; limit++) {
        expect(await timers.history(key, { limit })).toEqual(whole.slice(0, limit));
      }
      await timers.dispose();
    }
  });
});

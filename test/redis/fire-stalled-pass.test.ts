import type { FireCommands } from '@sundial/redis';
import { waitFor } from '@sundial/testing/harness';
import { eventually, matching, recorder, story, useFirePath } from './fire-fixture';

const fire = useFirePath();

/**
 * A dispatcher pass keeps its fire job open over up to five take-due calls and adds it after them. When
 * its process stalls past the reconciler's grace between two calls, the reconciler finds the first call's
 * hand-off without a job and arms the timer again, and the pass's next call takes it into the same job.
 * The pass names it once (dispatcher.ts `OpenJob.refs`): the one ref covers both hand-offs, each recorded
 * under the job, so the timer runs once and nothing is answered `stale`.
 */
describe('fire path: a pass stalled between two take-due calls', () => {
  it('names a timer the reconciler armed again once in its job, which runs it once', async () => {
    const cluster = await fire.cluster();
    const dispatcher = await cluster.dispatcher({ batchSize: 1 });
    // The stall: after the pass's first call that takes a timer, the reconciler runs with no grace left
    // (as one past its 2 s grace would), before the pass's next call.
    const commands = (dispatcher as unknown as { commands: FireCommands }).commands;
    const takeDue = commands.takeDue.bind(commands);
    let stalled = false;
    commands.takeDue = async (...args) => {
      const taken = await takeDue(...args);
      if (taken.job && !stalled) {
        stalled = true;
        expect(await cluster.reconciler({ graceMs: 0 }).reconcileOnce()).toMatchObject({ rearmed: 1 });
      }
      return taken;
    };
    // two due at once, so the pass takes them in calls of one: k0, k0 again (armed again), k1
    const past = (await cluster.redisNow()) - 1_000;
    await cluster.timers.scheduleMany(['k0', 'k1'].map((key, i) => ({ key, handler: 'h', at: past + i })));

    const queue = cluster.queueOf('k0');
    const [job] = await waitFor(async () => {
      const waiting = await queue.getWaiting();
      return waiting.length > 0 && waiting;
    });
    expect(stalled).toBe(true);
    expect(job!.data.timers.map(({ key, version }) => [key, version])).toEqual([
      ['k0', 1],
      ['k1', 1],
    ]);
    // both hand-offs of k0 recorded under the job: the reconciler re-arms neither while it waits
    expect(await cluster.jobOf('k0')).toBe(job!.id);
    expect(await cluster.reconciler({ graceMs: 0 }).reconcileOnce()).toMatchObject({ rearmed: 0 });

    const { calls, handler } = recorder();
    await cluster.runner({ h: handler });
    await eventually(cluster.events, { key: 'k0', type: 'completed' });
    await eventually(cluster.events, { key: 'k1', type: 'completed' });
    expect(calls.map((ctx) => ctx.key)).toEqual(['k0', 'k1']);
    expect(matching(cluster.events, { type: 'stale' })).toEqual([]);
    // both hand-offs in its history, one claim, no stale
    expect(story(await cluster.timers.history('k0'))).toEqual([
      ['scheduled', 1],
      ['armed', 1],
      ['armed', 1],
      ['claimed', 1],
      ['completed', 1],
    ]);
    // its job ended: the records of both hand-offs go, and nothing is left armed to re-arm
    expect(await cluster.reconciler({ graceMs: 0 }).reconcileOnce()).toMatchObject({ rearmed: 0 });
    expect(await fire.raw.zcard(cluster.timers.keys.armed(0))).toBe(0);
    expect(await fire.raw.zcard(cluster.timers.keys.jobs(0))).toBe(0);
  });
});

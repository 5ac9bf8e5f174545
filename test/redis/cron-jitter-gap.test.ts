import { jitterOf } from '@sundial/core';
import { waitFor } from '@sundial/testing/harness';
import { recorder, useFirePath } from './fire-fixture';

const fire = useFirePath();
const refused = (field = 'jitter') =>
  expect.objectContaining({ reason: 'invalid', field, message: expect.stringMatching(/the 1 min between/) });

/**
 * docs/spec.md §3.3c on Redis: a cron's jitter must be shorter than the shortest gap between its slots —
 * refused at schedule, in a batch and on replace, changing nothing — while a row an older release stored
 * with a longer one keeps it and goes on as before: pause, resume and reschedule read no spec. The
 * cases run side by side (`it.concurrent`), each on a prefix of its own: most of each is waiting for a
 * per-second cron's slots.
 */
describe("a cron's jitter and the gap between its slots, on Redis", () => {
  it.concurrent('is refused on every write of a spec, and nothing changes', async () => {
    const { timers } = await fire.cluster();
    const spec = { key: 'c', handler: 'h', cron: '* * * * *', tz: 'UTC', jitter: '2m' as const };
    await expect(timers.schedule(spec)).rejects.toThrow(refused());
    await timers.schedule({ ...spec, key: 'kept', jitter: '59s' });
    await expect(timers.scheduleMany([{ ...spec, key: 'a', jitter: '1s' }, spec])).rejects.toThrow(
      refused('specs[1].jitter'),
    );
    await expect(timers.schedule({ ...spec, key: 'kept', ifExists: 'replace' })).rejects.toThrow(refused());
    await expect(timers.preview(spec)).rejects.toThrow(refused());
    expect((await timers.list()).items.map((timer) => [timer.key, timer.jitter, timer.version])).toEqual([
      ['kept', 59_000, 1],
    ]);
  });

  it.concurrent.each([
    ['once', 'on time'],
    ['skip', 'on time'],
    ['once', 'behind'],
    ['skip', 'behind'],
  ] as const)(
    'a row stored before the refusal keeps its jitter: reschedule, pause, resume, next and its runs (catchup %s, a worker %s)',
    async (catchup, pace) => {
      const cluster = await fire.cluster();
      const { timers } = cluster;
      // 'behind': the first run lasts past the two slots after its own, as on a worker starved of CPU
      // (its claims and runs late): the slots it went past are skipped, whatever their jitter
      const tick = recorder(async (ctx, call) => {
        if (pace === 'on time' || call > 1) return;
        const past = slotOf(ctx.due)! + 2000;
        // deadline: the first run ends after that slot, up to 2 s on
        await waitFor(async () => (await cluster.redisNow()) > past, { intervalMs: 20, what: 'a slow run' });
      });
      await cluster.dispatcher();
      await cluster.runner({ h: tick.handler });
      // a per-second cron; its row then given the jitter an older release accepted (1.5 s)
      await timers.schedule({
        key: 'old',
        handler: 'h',
        cron: '* * * * * *',
        tz: 'UTC',
        jitter: 400,
        catchup,
      });
      await fire.raw.hset(timers.keys.row('old'), 'jt', '1500');
      await timers.reschedule('old', { delay: '1h' });
      await timers.pause('old');
      await timers.resume('old');
      const resumed = await timers.get('old');
      expect(resumed).toMatchObject({ status: 'pending', jitter: 1500 });
      const next = (await timers.next('old', { count: 2 })).map((time) => Date.parse(time.at));
      // each a whole-second slot moved by its own jitter of up to 1.5 s ('skip': before the next slot)
      const jitters = next.map((due) => due - slotOf(due)!);
      expect(jitters).toEqual([expect.any(Number), expect.any(Number)]);
      if (catchup === 'skip') expect(jitters.every((jitter) => jitter < 1000)).toBe(true);
      // deadline: two runs of a per-second cron moved by up to 1.5 s
      await waitFor(() => tick.calls.length >= 2, { intervalMs: 20, timeoutMs: 20_000, what: 'two runs' });
      const runs = tick.calls.slice(0, 2);
      const slots = runs.map((ctx) => slotOf(ctx.due));
      // its runs keep the jitter too: each due its slot moved by that slot's own; in order, none twice
      expect(slots).toEqual([expect.any(Number), expect.any(Number)]);
      expect(slots[1]!).toBeGreaterThan(slots[0]!);
      // Every slot from the one resume armed up to the second run ran or was recorded skipped before that
      // run's claim: a slot is never lost unrecorded nor run twice, however late the worker. A worker that
      // was on time skipped none, and ran the slots `next` listed (each run taken to end at once, §3.9); a
      // slot claimed after its successor came ('skip'), or gone past by a long run, is skipped, as §3.3c says.
      const story = (await timers.history('old')).reverse();
      const claims = story.filter((entry) => entry.event === 'claimed');
      expect(claims.length).toBeGreaterThanOrEqual(2);
      const skippedBefore = runs.map((_ctx, run) =>
        story
          .slice(0, story.indexOf(claims[run]))
          .filter((entry) => entry.event === 'skipped')
          .reduce((sum, entry) => sum + entry.count!, 0),
      );
      expect((slots[1]! - slotOf(resumed!.dueAt!)!) / 1000 + 1).toBe(2 + skippedBefore[1]);
      const listed = runs.map((ctx, run) => (skippedBefore[run] === 0 ? next[run] : ctx.due));
      expect(runs.map((ctx) => ctx.due)).toEqual(listed);
      if (pace === 'behind') expect(skippedBefore[1]).toBeGreaterThan(0);
    },
  );
});

/** The whole-second slot a due of the timer 'old' (jitter 1.5 s) is moved from by that slot's jitter. */
function slotOf(due: number): number | undefined {
  return [0, 1000]
    .map((back) => Math.floor(due / 1000) * 1000 - back)
    .find((slot) => due - slot === jitterOf('old', slot, 1500));
}

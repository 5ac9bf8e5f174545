import { jitterOf } from '@sundial/core';
import { waitFor } from '@sundial/testing/harness';
import { recorder, useFirePath } from './fire-fixture';

const fire = useFirePath();
const refused = (field = 'jitter') =>
  expect.objectContaining({ reason: 'invalid', field, message: expect.stringMatching(/the 1 min between/) });

/**
 * docs/spec.md §3.3c on Redis: a cron's jitter must be shorter than the shortest gap between its slots —
 * refused at schedule, in a batch and on replace, changing nothing — while a row an older release stored
 * with a longer one keeps it and goes on as before: pause, resume and reschedule read no spec.
 */
describe("a cron's jitter and the gap between its slots, on Redis", () => {
  it('is refused on every write of a spec, and nothing changes', async () => {
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

  it.each([['once'], ['skip']] as const)(
    'a row stored before the refusal keeps its jitter: reschedule, pause, resume, next and its runs (catchup %s)',
    async (catchup) => {
      const cluster = await fire.cluster();
      const { timers } = cluster;
      const tick = recorder();
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
      expect(await timers.get('old')).toMatchObject({ status: 'pending', jitter: 1500 });
      const next = (await timers.next('old', { count: 2 })).map((time) => Date.parse(time.at));
      // each a whole-second slot moved by its own jitter of up to 1.5 s ('skip': before the next slot)
      const jitters = next.map((due) =>
        [0, 1000]
          .map((back) => due - (Math.floor(due / 1000) * 1000 - back))
          .find((jitter) => jitter === jitterOf('old', due - jitter, 1500)),
      );
      expect(jitters).toEqual([expect.any(Number), expect.any(Number)]);
      if (catchup === 'skip') expect(jitters.every((jitter) => jitter! < 1000)).toBe(true);
      // deadline: two runs of a per-second cron moved by up to 1.5 s
      await waitFor(() => tick.calls.length >= 2, { intervalMs: 20, timeoutMs: 20_000, what: 'two runs' });
      // 'skip' passes every slot whose successor came before its due: the ones listed are the ones that run
      expect(tick.calls.slice(0, 2).map((ctx) => ctx.due)).toEqual(next);
    },
  );
});

import { closeSync, ftruncateSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TimerSpec } from '@sundial/core';
import { waitFor } from '@sundial/testing/harness';
import { counted, file, FOLLOW_DEADLINE_MS, followersOnRedis } from './schedules-fixture';

const keysOf = (count: number, from = 0) =>
  Array.from({ length: count }, (_, index) => `r${String(from + index).padStart(3, '0')}`);

/**
 * The schedules file as a platform team runs it (docs/spec.md §5.1): a file of hundreds of rows, edited
 * by GitOps or by hand, followed by two scheduler replicas at once. Each case has its own file, prefix
 * and followers beside one Redis.
 */
describe('SchedulesFollower under GitOps', () => {
  const { setUp } = followersOnRedis();

  /**
   * A writer in place that pauses mid-file (a script, a slow copy): before, a text was applied once two
   * reads 20 ms apart agreed, so the rows before a 100 ms pause were applied alone — the later rows'
   * timers cancelled, then made anew (new ids) once the rest was written.
   */
  it('does not apply the rows before a pause of a writer writing in place', async () => {
    const keys = keysOf(20);
    const { path, start, ids, applied, lines } = await setUp('pause', file(keys));
    await start();
    const before = await ids();
    expect([...before.keys()]).toEqual(keys);
    let conclusive = false;
    for (let attempt = 1; attempt <= 5 && !conclusive; attempt++) {
      const text = file([...keys, ...keysOf(attempt, 100)]);
      const cut = text.indexOf('  - { key: r010');
      const done = applied(keys.length + attempt, 'the whole file applied');
      const fd = openSync(path, 'r+');
      ftruncateSync(fd, 0);
      writeSync(fd, text.slice(0, cut), 0);
      const paused = Date.now();
      await sleep(100);
      // a pause the host stretched past the quiet window is one the follower may apply: not this case
      conclusive = Date.now() - paused < 250;
      writeSync(fd, text.slice(cut), cut);
      closeSync(fd);
      await done;
    }
    expect(conclusive).toBe(true);
    expect(lines.filter((line) => line.message.includes('removed'))).toEqual([]);
    const after = await ids();
    expect(keys.map((key) => after.get(key))).toEqual(keys.map((key) => before.get(key)));
  });

  it('applies an edit of one row of 500 with one listing and one write, not a read per row', async () => {
    const keys = ['k0', ...keysOf(499)];
    const { path, timers, start, applied } = await setUp('many', file(keys));
    const { api, calls } = counted(timers);
    await start(api);
    // 500 new rows: a write each (and a listing), no read before each
    expect(calls).toEqual({ list: 1, schedule: 500 });
    expect((await timers.list({ limit: 1000 })).items).toHaveLength(500);
    for (const name of Object.keys(calls)) delete calls[name];
    const done = applied(500, 'the edit applied');
    writeFileSync(
      path,
      file(keys, (key) => (key === 'k0' ? '4h' : '2h')),
    );
    await done;
    // before, 500 `get`s (a round trip per row) came first; the listing is pages of 500
    expect(calls).toEqual({ list: expect.any(Number), schedule: 1 });
    expect(calls.list).toBeLessThanOrEqual(2);
    expect((await timers.get('k0'))?.everyMs).toBe(4 * 3_600_000);
  });

  /**
   * Two replicas following the same file read the old row at once (held until both have read it):
   * before, each replaced it — two writes, two ids, two `scheduled` lines — and each logged the removal
   * of a row the other had cancelled.
   */
  it('two replicas apply an edit once: one replace, one removal', async () => {
    const { path, timers, start, lines } = await setUp('replicas', file(['k0', 'gone']));
    let armed = false;
    let writers = 0;
    const replica = () =>
      counted(timers, async (name, args) => {
        if (!armed || name !== 'schedule' || (args[0] as TimerSpec).key !== 'k0') return;
        writers++;
        // each write held until the other replica's has come too (within a second of the edit)
        await waitFor(() => writers >= 2, {
          timeoutMs: FOLLOW_DEADLINE_MS,
          intervalMs: 5,
          what: 'the other replica to write k0',
        });
      }).api;
    const [first, second] = [replica(), replica()];
    await start(first);
    await start(second);
    const before = await timers.get('k0');
    armed = true;
    writeFileSync(
      path,
      file(['k0'], () => '5h'),
    );
    const after = await waitFor(
      async () => {
        const row = await timers.get('k0');
        return row?.everyMs === 5 * 3_600_000 && (await timers.get('gone')) === null && row;
      },
      { timeoutMs: FOLLOW_DEADLINE_MS, intervalMs: 10, what: 'the edit applied' },
    );
    await waitFor(() => lines.filter((line) => line.message === 'schedules file applied').length >= 4, {
      timeoutMs: FOLLOW_DEADLINE_MS,
      what: 'both replicas done',
    });
    expect(writers).toBe(2);
    expect(after.id).not.toBe(before?.id);
    // newest first: the one replace (the new row's `scheduled`, the old one's `replaced`), the create
    const events = (await timers.history('k0')).map((entry) => entry.event);
    expect(events).toEqual(['scheduled', 'replaced', 'scheduled']);
    const removals = lines.filter((line) => line.message.includes('row removed'));
    expect(removals.map((line) => line.fields?.key)).toEqual(['gone']);
  });

  it('keeps the rows while the file is missing, reports it once, and writes nothing when it is back', async () => {
    const text = file(['k0', 'r1']);
    const { path, timers, start, ids, statuses, lines, applied, backAsItWas } = await setUp('missing', text);
    await start();
    const before = await ids();
    const started = lines.length;
    rmSync(path);
    const from = statuses.length;
    // several passes over the missing file (one every 250 ms)
    await waitFor(() => statuses.length >= from + 3, { timeoutMs: FOLLOW_DEADLINE_MS, what: '3 passes' });
    expect(statuses.slice(from).every((status) => status.problems === 1 && !status.appliedAt)).toBe(true);
    expect(lines.slice(started).filter((line) => line.level === 'warn')).toEqual([
      expect.objectContaining({ fields: expect.objectContaining({ field: 'SUNDIAL_SCHEDULES_FILE' }) }),
    ]);
    expect(await ids()).toEqual(before);
    await backAsItWas(text, 2, started, before);
    // `timers: []` is how the rows are all removed
    const none = applied(0, 'the empty list applied');
    writeFileSync(path, 'timers: []\n');
    await none;
    expect((await timers.list()).items).toEqual([]);
  });
});

/**
 * The differential suite's judge of `list({ dueBefore })` answers that differ (due-listing.ts), on two
 * in-memory engines standing in for the two backends: one schedules two timers in one call (one now),
 * the other 3 ms apart, as Redis does a `scheduleMany` over two partitions (a schedule.lua call each, each
 * at its own TIME) — the seed-58 (with partOf) divergence. Runs on the unit project only.
 */
import { type ListOptions, type TimersBackend } from '@sundial/core';
import { harness } from '../engine/harness';
import { BACKENDS } from './backends';
import { type Side } from './differential-calls';
import { difference, normal, outcomeOf } from './differential-compare';
import { dueListingDifference } from './due-listing';

const HOUR = 3_600_000;
const onMemory = BACKENDS.includes('memory') ? describe : describe.skip;

onMemory('differential: a dueBefore listing judged by each backend’s own dues', () => {
  const side = (timers: TimersBackend, query: ListOptions): Side => ({
    timers,
    ids: new Map(),
    id: () => '',
    cursor: null,
    query,
  });

  async function listings(apartMs: number) {
    const one = harness();
    const other = harness();
    const start = one.clock.now();
    await one.engine.scheduleMany([
      { key: 'a', handler: 'work', delay: HOUR },
      { key: 'b', handler: 'work', delay: HOUR },
    ]);
    await other.engine.schedule({ key: 'b', handler: 'work', delay: HOUR });
    await other.clock.advance(apartMs); // virtual clock
    await other.engine.schedule({ key: 'a', handler: 'work', delay: HOUR });
    await one.clock.advance(apartMs); // virtual clock
    const query = { dueBefore: start + 2 * HOUR, limit: 1 };
    const [mem, red] = [side(one.engine, query), side(other.engine, query)];
    const listed = [
      await outcomeOf(() => mem.timers.list(query)),
      await outcomeOf(() => red.timers.list(query)),
    ];
    const now = one.clock.now();
    return {
      mem: { side: mem, outcome: listed[0], now },
      red: { side: red, outcome: listed[1], now },
      listed,
    };
  }

  it('timers due 3 ms apart on one and together on the other may list in either order within the slack', async () => {
    const { mem, red, listed } = await listings(3);
    const keys = listed.map((o) => (o as { answer: { items: { key: string }[] } }).answer.items[0].key);
    expect(keys).toEqual(['a', 'b']); // together: key order; 3 ms apart: b first
    // the two answers compared as they are (within the slack) differ: the suite's seed 58 with partOf
    const [x, y] = listed.map((o) => normal(o, mem.now, new Map()));
    expect(difference(x, y, 3_000)).toBe('.answer.items.0.key: "a" vs "b"');
    expect(await dueListingDifference(mem, red, 3_000)).toBeNull();
  });

  it('but not past the slack', async () => {
    const { mem, red } = await listings(3);
    expect(await dueListingDifference(mem, red, 2)).toMatch(
      /^the pending timers differ: \.0\.scheduledAt\.ms: -3 vs 0$/,
    );
  });

  it('nor an answer that is not its own backend’s listing', async () => {
    const { mem, red } = await listings(3);
    const wrong = await red.side.timers.list({ ...red.side.query, limit: 2 });
    const swapped = {
      answer: {
        items: [wrong.items[1]],
        nextCursor: (red.outcome as { answer: { nextCursor: string } }).answer.nextCursor,
      },
    };
    expect(await dueListingDifference(mem, { ...red, outcome: swapped }, 3_000)).toMatch(
      /^redis's answer is not the listing of its own pending timers \(§3.6\): \.items\.0\.key: "a" vs "b"/,
    );
    expect(await dueListingDifference({ ...mem, outcome: { refused: {} } }, red, 3_000)).toBe(
      'not both answered',
    );
  });
});

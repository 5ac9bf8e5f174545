/**
 * How the differential suite (differential.test.ts) judges a `list({ dueBefore })` whose two answers
 * differ. Such a listing is in due order, then key order (docs/spec.md §3.6), by each backend's own dues;
 * the suite compares instants read from the two clocks only within a slack. A call that sets several
 * timers' dues from its now — a `scheduleMany` whose specs span partitions or pass 100 a partition — runs
 * on the engine at one instant of its virtual clock, but on Redis as several schedule.lua calls, each at
 * its own `TIME`: dues equal on the engine are a few ms apart on Redis. Those timers then list in key
 * order on the engine and in due order on Redis — and a page's end, or the `dueBefore` bound, may fall
 * among them differently — both as the contract says. Then this checks what the contract promises
 * instead of the two answers' likeness: each answer is exactly the listing its own backend's pending
 * timers make (read back in key order), and those timers are the same on both, each due within the slack.
 */
import {
  compareDue,
  decodeDueCursor,
  encodeDueCursor,
  type ListOptions,
  type ListResult,
  type Timer,
} from '@sundial/core';
import { type Side } from './differential-calls';
import { difference, normal } from './differential-compare';

/** One backend's side of the listing (`side.query` what it was asked): its outcome, and its now then. */
export interface DueListing {
  side: Side;
  outcome: unknown;
  now: number;
}

/**
 * Where two dueBefore listings that differ stop being explained by their backends' own dues, or null.
 * A refusal on either side is not a listing: the two outcomes' difference stands.
 */
export async function dueListingDifference(
  mem: DueListing,
  red: DueListing,
  slackMs: number,
): Promise<string | null> {
  const answered = (listing: DueListing) => (listing.outcome as { answer?: ListResult }).answer;
  if (!answered(mem) || !answered(red)) return 'not both answered';
  const [memPending, redPending] = [await pendingOf(mem.side), await pendingOf(red.side)];
  for (const [name, listing, pending] of [
    ['memory', mem, memPending],
    ['redis', red, redPending],
  ] as const) {
    const own = difference(exact(answered(listing)!), exact(listingOf(pending, listing.side.query!)), 0);
    if (own) return `${name}'s answer is not the listing of its own pending timers (§3.6): ${own}`;
  }
  // the same timers on both, each due within the slack (a copy of each id map: this read names no id)
  const a = normal(memPending, mem.now, new Map(mem.side.ids));
  const b = normal(redPending, red.now, new Map(red.side.ids));
  const state = difference(a, b, slackMs);
  return state && `the pending timers differ: ${state}`;
}

/** Every pending timer of a backend, in key order. */
async function pendingOf(side: Side): Promise<Timer[]> {
  const all: Timer[] = [];
  for (let cursor: string | undefined, n = 0; n === 0 || cursor; n++) {
    const page = await side.timers.list({ status: 'pending', limit: 1000, cursor });
    all.push(...page.items);
    cursor = page.nextCursor ?? undefined;
  }
  return all;
}

/** What `list(query)` with a `dueBefore` answers of these pending timers (the engine's rule, §3.6). */
export function listingOf(pending: Timer[], query: ListOptions): ListResult {
  const { prefix = '', limit = 100, dueBefore = 0 } = query;
  const after = decodeDueCursor({ prefix, dueBefore, cursor: query.cursor });
  const position = (timer: Timer) => ({ due: timer.dueAt, key: timer.key });
  const matching = pending
    .filter((timer) => timer.key.startsWith(prefix) && timer.dueAt <= dueBefore)
    .filter((timer) => !after || compareDue(position(timer), after) > 0)
    .sort((x, y) => compareDue(position(x), position(y)));
  const page = matching.slice(0, limit);
  return {
    items: page,
    nextCursor:
      matching.length > limit
        ? encodeDueCursor(position(page[page.length - 1]), { prefix, dueBefore })
        : null,
  };
}

/** A listing in normal form, instants as they are (ms from 0) and ids as they are: compared exactly. */
function exact({ items, nextCursor }: ListResult): unknown {
  return normal(
    { items: items.map(({ id, ...rest }) => ({ ...rest, timerId: id })), nextCursor },
    0,
    new Map(),
  );
}

import { type BackfillResult, backfillSlots, isEndedStatus, refusals } from '@sundial/core';
import type { RowReply } from '../store/replies';
import type { CallRequests } from '../store/requests';
import type { StoreCommands } from '../store/store-commands';
import type { TimerReads } from './timer-reads';
import { expectTimer } from './write-replies';

/**
 * Runs the slots of [from, to] of `key`'s row now, in order, each due at its slot (docs/spec.md §3.3c).
 * The slots are found here, by core's rule, for the row as read; backfill.lua takes them only for that
 * version, and answers 'retry' when the row moved on between the read and the script: it is read again.
 * A caller's retry first asks for its first answer (docs/design.md "Repeated calls"): the row it was
 * found for may have moved on, run its slots, or ended since, and the answer is still the first one.
 */
export async function backfillRow(
  reads: TimerReads,
  commands: StoreCommands,
  now: () => number,
  key: string,
  range: { from: number; to: number },
  requests: CallRequests,
): Promise<BackfillResult> {
  if (requests.repeated) {
    // no row has id '' (version 0): not given again, the call is refused 'retry' (or not-found), unchanged
    const kept = await commands.backfill(key, { id: '', version: 0 }, [], requests);
    if (kept.again) return backfilled(key, kept);
  }
  for (;;) {
    const timer = await reads.get(key);
    if (!timer || !['pending', 'running', 'paused'].includes(timer.status)) {
      // a kept row that ended: the refusal names its status, as backfill.lua's own (write-replies.ts)
      throw isEndedStatus(timer?.status)
        ? refusals.ended(key, timer.status, 'backfill')
        : refusals.notFound(key);
    }
    if (timer.kind === 'once') throw refusals.backfillNotPeriodic(key);
    const slots = backfillSlots(timer, range.from, range.to, now());
    if (slots.length === 0) return { slots: 0 };
    const reply = await commands.backfill(key, timer, slots, requests);
    if (reply.code !== 'retry') return backfilled(key, reply);
  }
}

/** The slots a backfill armed, from its row: the one armed (`d`) and the rest (`bf`, a JSON array). */
function backfilled(key: string, reply: RowReply): BackfillResult {
  expectTimer(key, 'backfill', reply);
  return { slots: 1 + (JSON.parse(reply.fields.bf ?? '[]') as number[]).length };
}

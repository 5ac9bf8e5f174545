import { toMs } from './duration';
import { givenFields, type Input, isGiven, oneOf } from './input-checks';
import { refusals } from './refusals';
import { showValue } from './show-value';
import { normalizeAt } from './time-fields';
import type { Catchup, NormalizedSpec, SlotPolicy } from './types';

/* The slot policies of a spec (docs/spec.md §3.3c): catchup, catchupWindow, jitter, startAt, endAt. */

export const SLOT_POLICY_FIELDS = ['catchup', 'catchupWindow', 'jitter', 'startAt', 'endAt'] as const;
const CATCHUPS: readonly Catchup[] = ['once', 'skip', 'all'];
const DAY_MS = 86_400_000;
/** The longest catch-up window (a year) and the longest jitter (a day): beyond them a slot means nothing. */
const MAX_WINDOW_MS = 366 * DAY_MS;
const MAX_JITTER_MS = DAY_MS;
/** What a spec without slot policies gets: one shared object, not one per spec (it is only read). */
const NO_POLICY: SlotPolicy = Object.freeze({});

/**
 * The policies given, normalized: each absent when not given, `catchup: 'once'` (the default) too, so a
 * row stores nothing for a default. Refused on a one-shot timer; `jitter` must be shorter than `every`
 * (slots stay in order), `endAt` after `startAt`.
 */
export function normalizeSlotPolicy(
  input: Input,
  kind: NormalizedSpec['kind'],
  everyMs: number | undefined,
  awaitTask: boolean,
): SlotPolicy {
  const given = givenFields(input, SLOT_POLICY_FIELDS);
  if (given.length === 0) return NO_POLICY;
  if (kind === 'once') throw refusals.periodicOnly(given[0], showValue(input[given[0]]));
  const policy: SlotPolicy = {};
  const catchup = oneOf(input.catchup, 'catchup', CATCHUPS);
  // A run that does not await its task (awaitTask false, overlap 'allow' | 'cancel-other') arms the next
  // slot at its claim: it has no run end to catch up from.
  if (catchup === 'all' && !awaitTask) throw refusals.catchupAllFree();
  if (catchup !== 'once') policy.catchup = catchup;
  if (isGiven(input.catchupWindow)) {
    policy.catchupWindow = positiveDuration(
      input.catchupWindow,
      'catchupWindow',
      MAX_WINDOW_MS,
      'of at most 366 days',
    );
  }
  if (isGiven(input.jitter)) {
    const bound = everyMs === undefined ? MAX_JITTER_MS : Math.min(MAX_JITTER_MS, everyMs - 1);
    const words =
      everyMs === undefined ? 'of at most 1 day' : `shorter than every (${everyMs} ms) and at most 1 day`;
    policy.jitter = positiveDuration(input.jitter, 'jitter', bound, words);
  }
  if (isGiven(input.startAt)) policy.startAt = normalizeAt(input.startAt, 'startAt');
  if (isGiven(input.endAt)) policy.endAt = normalizeAt(input.endAt, 'endAt');
  if (policy.startAt !== undefined && policy.endAt !== undefined && policy.endAt <= policy.startAt) {
    throw refusals.endsBeforeStart(
      `${new Date(policy.endAt).toISOString()} is not after startAt ${new Date(policy.startAt).toISOString()}`,
    );
  }
  return policy;
}

function positiveDuration(value: unknown, field: string, max: number, words: string): number {
  const ms = toMs(value as number | string, field);
  if (!(ms > 0) || ms > max) throw refusals.badPolicyDuration(field, showValue(value), words);
  return ms;
}

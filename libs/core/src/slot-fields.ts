import { shortestCronGap } from './cron-gap';
import { toMs } from './duration';
import { givenFields, type Input, isGiven, oneOf } from './input-checks';
import { refusals } from './refusals';
import { showValue } from './show-value';
import { SLOT_POLICY_FIELDS } from './spec-fields';
import { normalizeAt } from './time-fields';
import type { Catchup, NormalizedSpec, SlotPolicy } from './types';

/* The slot policies of a spec (docs/spec.md §3.3c): catchup, catchupWindow, jitter, startAt, endAt. */

const CATCHUPS: readonly Catchup[] = ['once', 'skip', 'all'];
const DAY_MS = 86_400_000;
/** The longest catch-up window (a year) and the longest jitter (a day): beyond them a slot means nothing. */
const MAX_WINDOW_MS = 366 * DAY_MS;
const MAX_JITTER_MS = DAY_MS;
/** What a spec without slot policies gets: one shared object, not one per spec (it is only read). */
const NO_POLICY: SlotPolicy = Object.freeze({});

/** The schedule of the spec, as normalizeSchedule gave it. */
type SlotSchedule = Pick<NormalizedSpec, 'kind' | 'everyMs' | 'cron' | 'tz'>;

/**
 * The policies given, normalized: each absent when not given, `catchup: 'once'` (the default) too, so a
 * row stores nothing for a default. Refused on a one-shot timer; `jitter` must be shorter than `every`,
 * or than the shortest gap between a cron's slots (slots stay in order), `endAt` after `startAt`.
 */
export function normalizeSlotPolicy(input: Input, schedule: SlotSchedule, awaitTask: boolean): SlotPolicy {
  const { kind, everyMs } = schedule;
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
  if (policy.jitter !== undefined && schedule.cron !== undefined) {
    refuseCronJitter(input.jitter, policy.jitter, schedule.cron, schedule.tz!, policy.startAt);
  }
  if (policy.startAt !== undefined && policy.endAt !== undefined && policy.endAt <= policy.startAt) {
    throw refusals.endsBeforeStart(
      `${new Date(policy.endAt).toISOString()} is not after startAt ${new Date(policy.startAt).toISOString()}`,
    );
  }
  return policy;
}

/**
 * A cron's jitter must be shorter than the shortest gap between its slots, as an interval's is than
 * `every`: a due moved past the next slot passes that slot as late (`missed`, or under `catchup: 'skip'`
 * nearly every slot). Checked on a new spec only (schedule, replace, preview, the declarative sources): a row
 * stored before this check keeps its jitter, and reschedule, pause and resume read no spec.
 */
function refuseCronJitter(value: unknown, jitter: number, cron: string, tz: string, startAt?: number): void {
  const gap = shortestCronGap(cron, tz, Math.max(Date.now(), startAt ?? 0));
  if (gap === null || jitter < gap.ms) return;
  const where =
    gap.at === undefined
      ? `in ${tz}`
      : `in ${tz} from ${new Date(gap.at).toISOString()} (its UTC offset changes between them)`;
  throw refusals.jitterNotShorterThanCron(showValue(value), gapText(gap.ms), where, durationLiteral(gap.ms));
}

const UNITS: [number, string, string][] = [
  [DAY_MS, 'd', 'd'],
  [3_600_000, 'h', 'h'],
  [60_000, 'm', 'min'],
  [1000, 's', 's'],
  [1, 'ms', 'ms'],
];

/** `ms` as a Duration in the largest unit it is a whole number of: 60000 → "1m", 1500 → "1500ms". */
function durationLiteral(ms: number): string {
  const [size, unit] = UNITS.find(([size]) => ms % size === 0)!;
  return `${ms / size}${unit}`;
}

/** `ms` in words, exactly (durationText rounds): 84600000 → "23 h 30 min". */
function gapText(ms: number): string {
  const parts: string[] = [];
  for (const [size, , word] of UNITS) {
    if (ms >= size) parts.push(`${Math.floor(ms / size)} ${word}`);
    ms %= size;
  }
  return parts.join(' ');
}

function positiveDuration(value: unknown, field: string, max: number, words: string): number {
  const ms = toMs(value as number | string, field);
  if (!(ms > 0) || ms > max) throw refusals.badPolicyDuration(field, showValue(value), words);
  return ms;
}

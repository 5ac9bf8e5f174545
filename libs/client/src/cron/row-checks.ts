import { isSundialError, normalizeSpec, type SpecLimits, type TimerSpec } from '@sundial/core';
import type { DiscoveredRow } from '../handler-registry';
import { rowRefusal, withOwner } from './row-refusal';
import { RowSources } from './row-sources';

/**
 * `waitForCompletion` in Sundial's words: `false` is `overlap: 'allow'` (the next slot is armed at the
 * claim, as `@Cron`'s `false` lets one process run ticks side by side); `true` waits for the run, which
 * `allow` and `cancel-other` do not. An `overlap` that says otherwise stops the boot. Absent, a cron
 * waits (its row's default, `skip`) and an interval does not, as `@Interval` does not: an interval that
 * waits ends when a run throws (docs/spec.md §3.3), a cluster's heartbeat gone until the next boot.
 */
export function withOverlap(row: DiscoveredRow): DiscoveredRow {
  const { overlap } = row;
  const waitOption = row.retry !== undefined ? 'retry' : row.catchup === 'all' ? "catchup: 'all'" : undefined;
  if (row.kind === 'interval' && row.waitForCompletion === undefined && overlap === undefined && waitOption) {
    // Said in the decorator's words: the row's own refusal would name an overlap 'allow' nobody wrote.
    throw rowRefusal(
      row,
      waitOption === 'retry' ? 'retry' : 'catchup',
      `${waitOption} needs runs that wait, and an interval does not wait unless told (waitForCompletion false, as @Interval).`,
      `Add waitForCompletion: true (a run that throws after its last try then ends the interval), or remove ${waitOption}.`,
    );
  }
  const waitForCompletion =
    row.waitForCompletion ?? (row.kind === 'interval' && overlap === undefined ? false : undefined);
  if (waitForCompletion === undefined) return row;
  const detached = overlap === 'allow' || overlap === 'cancel-other';
  if (waitForCompletion === false && overlap !== undefined && overlap !== 'allow') {
    throw rowRefusal(
      row,
      'waitForCompletion',
      `waitForCompletion: false (runs overlap: overlap 'allow') contradicts overlap '${overlap}'.`,
      `Remove waitForCompletion, or set overlap: 'allow'.`,
    );
  }
  if (waitForCompletion && detached) {
    throw rowRefusal(
      row,
      'waitForCompletion',
      `waitForCompletion: true contradicts overlap '${overlap}', which does not wait for the run.`,
      'Remove waitForCompletion, or choose an overlap that waits (skip or buffer-one).',
    );
  }
  return waitForCompletion ? row : { ...row, overlap: 'allow' };
}

/**
 * The spec, validated as its write will validate it, before this replica announces its declaration set:
 * a row the write refuses (an expression a config key gives that is not a cron) stops the boot, and its
 * set, announced first, was the newest — the running build's replicas deferred to a build that never
 * wrote, and wrote nothing after a reset. The refusal names the decorator and, for a value read from a
 * source, the config key or provider and the value.
 */
export function checked(row: DiscoveredRow, spec: TimerSpec, limits: SpecLimits): TimerSpec {
  try {
    normalizeSpec(spec, limits, true);
    return spec;
  } catch (error) {
    const from = RowSources.sourceOf(row);
    const field = row.kind === 'cron' ? 'cron' : 'every';
    if (!from || !isSundialError(error) || error.field !== field) throw withOwner(row, error);
    const value = row.kind === 'cron' ? spec.cron : spec.every;
    throw rowRefusal(
      row,
      field,
      `the ${from} gives ${JSON.stringify(value)}: ${error.message}`,
      `Fix the ${from}: ${error.fix}`,
    );
  }
}

/**
 * A refusal saying `endAt` leaves no slot from now on, for a spec whose window is well-formed (`endAt`
 * after `startAt`): the window is over. An `endAt` not after `startAt` is a mistake and still refused.
 */
export function windowOver(spec: TimerSpec, error: unknown): boolean {
  if (!isSundialError(error) || error.field !== 'endAt' || spec.endAt === undefined) return false;
  try {
    normalizeSpec(spec, {}, true); // refuses an endAt not after startAt, as the (owner's) write did
    return true;
  } catch {
    return false;
  }
}

/** How many keys a hand-back line names per delivery mode; the rest are counted. */
export const HAND_BACK_KEYS_NAMED = 20;

/** What the hand-back line needs of a run: its key, its delivery mode, and whether its handler was called. */
export interface HandedBackRun {
  key: string;
  atMostOnce: boolean;
  /** false: never started (claimed ahead of its due), so an at-most-once run runs again too; default true */
  started?: boolean;
}

/**
 * The warn line of a worker's hand-back at the end of its shutdown grace (docs/spec.md §4.6, §6.3): the keys of
 * the runs still going, by what becomes of them. At-least-once: the release expires its lease and the reconcile
 * puts it back to pending, so another worker claims and runs it again; at-most-once: the reconcile records the
 * run failed with reason 'lost' and it is not run again (a periodic timer goes on with its next slot).
 */
export function handBackLine(runs: HandedBackRun[]): { message: string; fields: Record<string, unknown> } {
  const isLost = (run: HandedBackRun) => run.atMostOnce && run.started !== false;
  const again = runs.filter((run) => !isLost(run)).map((run) => run.key);
  const lost = runs.filter(isLost).map((run) => run.key);
  const kinds = runs.some((run) => run.atMostOnce && !isLost(run))
    ? 'at-least-once or not started'
    : 'at-least-once';
  const parts = [
    again.length > 0 && `${kinds}, they run again on another worker: ${named(again)}`,
    lost.length > 0 && `at-most-once, recorded lost (reason 'lost'), not run again: ${named(lost)}`,
  ].filter(Boolean);
  const message =
    `Sundial worker: ${runs.length} run${runs.length === 1 ? '' : 's'} still going at the end of the ` +
    `shutdown grace, aborted and handed back; ${parts.join('; ')}`;
  return {
    message,
    fields: { runAgain: again.slice(0, HAND_BACK_KEYS_NAMED), lost: lost.slice(0, HAND_BACK_KEYS_NAMED) },
  };
}

/**
 * The warn line of at-most-once runs whose worker was lost (died, or stalled past its lease), settled by a
 * reconcile pass or by the claim of a redelivered job: recorded failed with reason 'lost', not run again.
 */
export function lostLine(keys: string[]): string {
  return (
    `Sundial: ${keys.length} at-most-once run${keys.length === 1 ? '' : 's'} lost with ${keys.length === 1 ? 'its' : 'their'} worker ` +
    `(lease expired), recorded failed with reason 'lost' and not run again: ${named(keys)}`
  );
}

/** At most HAND_BACK_KEYS_NAMED keys, then how many more. */
function named(keys: string[]): string {
  const shown = keys.slice(0, HAND_BACK_KEYS_NAMED).join(', ');
  const more = keys.length - HAND_BACK_KEYS_NAMED;
  return more > 0 ? `${shown} and ${more} more` : shown;
}

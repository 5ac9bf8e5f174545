import type { Timer } from '@sundial/core';
// The module itself, not @sundial/core's index: that loads the whole engine (and needs the path
// mapping) at every invocation, for one function (output.ts takes scheduleText so too).
import { durationText } from '../../../libs/core/src/browser/duration-text';
import { fields, lastRun, schedule, time } from './output';

/** A timer as `name: value` lines. The payload and meta are printed only when asked (`--show-payload`). */
export function timerText(timer: Timer, showPayload = false): string {
  const bytes = Buffer.byteLength(JSON.stringify(timer.payload ?? null));
  const payload = (timer.payload ?? null) === null ? 'none' : `${bytes} bytes (--show-payload prints it)`;
  const rows: [string, string][] = [
    ['key', timer.key],
    ['status', timer.status],
    ['schedule', schedule(timer)],
    ['handler', timer.handler],
    ['due', time(timer.dueAt)],
    ['runs', timer.maxRuns === undefined ? String(timer.runCount) : `${timer.runCount} of ${timer.maxRuns}`],
    ['last run', lastRunTimes(timer)],
    ['last fired', time(timer.lastFiredAt)],
    ['last completed', time(timer.lastCompletedAt)],
    ['last error', lastError(timer)],
    ['id', `${timer.id} (version ${timer.version})`],
    ['payload', showPayload ? JSON.stringify(timer.payload) : payload],
  ];
  // the bound of each run (the spec's timeout), which a run failed with reason timeout is measured against
  if (timer.timeout !== undefined) rows.splice(6, 0, ['timeout', durationText(timer.timeout)]);
  if (showPayload && timer.meta !== undefined) rows.push(['meta', JSON.stringify(timer.meta)]);
  return fields(rows);
}

/** The last run's outcome and when it started (and ended): how long a running one has been at it. */
function lastRunTimes(timer: Timer): string {
  const last = timer.last;
  if (!last) return lastRun(timer);
  const ended = last.ended === undefined ? '' : `, ended ${time(last.ended)}`;
  return `${lastRun(timer)}, started ${time(last.started)}${ended}`;
}

/**
 * When the timer last failed, with the error when its last run is that failure — as the UI shows it: a
 * failure before a run that went well is still its last error, not none.
 */
function lastError(timer: Timer): string {
  const error = timer.last?.error;
  return error ? `${time(timer.lastErrorAt)} ${error.message}` : time(timer.lastErrorAt);
}

import type { Timer } from '@sundial/core';
import { lastRun, schedule, time } from './output';

/** The columns a table of timers has: `list`'s, and a batch's `schedule`. */
export const TIMER_HEADERS = ['KEY', 'STATUS', 'SCHEDULE', 'HANDLER', 'DUE', 'RUNS', 'LAST'];

export function timerRow(t: Timer): string[] {
  return [t.key, t.status, schedule(t), t.handler, time(t.dueAt), String(t.runCount), lastRun(t)];
}

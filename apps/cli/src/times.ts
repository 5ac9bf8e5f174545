import type { NextTime } from '@sundial/core';
import { table } from './output';

/**
 * Due times as the API gives them (the instant in UTC and the zone's offset then) and, as a cron's
 * zone reads it, the wall time at that offset: `2026-12-07T08:00:00.000Z` at `+01:00` is 09:00 there.
 */
export function timesTable(times: NextTime[], none: string): string {
  return times.length
    ? table(
        ['#', 'AT', 'OFFSET', 'LOCAL'],
        times.map((t, i) => [String(i + 1), t.at, t.offset, wallTime(t)]),
      )
    : none;
}

function wallTime({ at, offset }: NextTime): string {
  const match = /^([+-])(\d\d):(\d\d)$/.exec(offset);
  const instant = Date.parse(at);
  if (!match || Number.isNaN(instant)) return '—';
  const minutes = (match[1] === '-' ? -1 : 1) * (Number(match[2]) * 60 + Number(match[3]));
  return `${new Date(instant + minutes * 60_000).toISOString().slice(0, -1)}${offset}`;
}

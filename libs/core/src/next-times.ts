import { nextCronSlot } from './cron';
import type { NextTime } from './ledger';
import { firstDue } from './schedule';
import { zoneOffset } from './time-zone';
import type { NormalizedSpec, Timer, TimerKind } from './types';

/** What decides a timer's coming due times. */
interface Slots {
  kind: TimerKind;
  everyMs?: number;
  cron?: string;
  tz?: string;
  /** runs still allowed (maxRuns − runs so far); undefined: no limit */
  remaining?: number;
}

/**
 * The next `count` due times of a live timer as its schedule will produce them (docs/spec.md §3.9):
 * its armed `dueAt` first (unless that run is going on now), then each following slot — an
 * interval's grid, a cron's occurrences in its zone (DST rules of §3.3) — up to `maxRuns`. A paused or
 * finished timer has none.
 */
export function nextTimesOf(timer: Timer, count: number): NextTime[] {
  if (timer.status !== 'pending' && timer.status !== 'running') return [];
  const slots = slotsOf(timer, timer.maxRuns === undefined ? undefined : timer.maxRuns - timer.runCount);
  const times = dueTimes(timer.dueAt, slots, count + (timer.status === 'running' ? 1 : 0));
  return (timer.status === 'running' ? times.slice(1) : times).map((at) => withOffset(at, timer.tz));
}

/** The due times a new timer of `spec` created at `now` would have (`preview`). */
export function previewTimes(spec: NormalizedSpec, now: number, count: number): NextTime[] {
  return dueTimes(firstDue(spec, now), slotsOf(spec, spec.maxRuns), count).map((at) =>
    withOffset(at, spec.tz),
  );
}

/** `at` as ISO 8601 (UTC) with the zone's offset there: `+00:00` for a timer without a zone. */
export function withOffset(at: number, tz: string | undefined): NextTime {
  const offsetMinutes = Math.round(zoneOffset(tz ?? 'UTC', at) / 60_000);
  const sign = offsetMinutes < 0 ? '-' : '+';
  const hours = String(Math.floor(Math.abs(offsetMinutes) / 60)).padStart(2, '0');
  const minutes = String(Math.abs(offsetMinutes) % 60).padStart(2, '0');
  return { at: new Date(at).toISOString(), offset: `${sign}${hours}:${minutes}` };
}

function slotsOf(
  source: Pick<Timer, 'kind' | 'everyMs' | 'cron' | 'tz'>,
  remaining: number | undefined,
): Slots {
  return { kind: source.kind, everyMs: source.everyMs, cron: source.cron, tz: source.tz, remaining };
}

function dueTimes(first: number, slots: Slots, count: number): number[] {
  const limit = Math.min(count, Math.max(0, slots.remaining ?? count), slots.kind === 'once' ? 1 : count);
  const times: number[] = [];
  let due: number | null = first;
  while (due !== null && times.length < limit) {
    times.push(due);
    due = following(due, slots);
  }
  return times;
}

function following(due: number, slots: Slots): number | null {
  if (slots.kind === 'interval') return due + slots.everyMs!;
  if (slots.kind === 'cron') return nextCronSlot(slots.cron!, slots.tz!, due);
  return null;
}

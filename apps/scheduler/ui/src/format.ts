/** How times, durations and schedules read in the UI: local time (its offset when not the header's), and "in 5 min". */
// @sundial/core's, compiled by this UI's build and served beside its modules (tsconfig.json `rootDirs`)
import { durationText } from './duration-text.js';
import type { Timer } from './types.js';
import { now } from './clock.js';

/**
 * `2026-12-03 09:38:30` in the browser's zone at the offset the header names (its offset now): sortable.
 * An instant at another offset of the zone (across a daylight-saving change: a July time read in
 * December) adds its own, `2027-07-01 08:00:00 (UTC-04:00)`: without it, read with the header's
 * UTC-05:00 it named an instant an hour off, and the hour a fall-back repeats was shown twice alike.
 */
export function formatTime(at: number | string | null | undefined): string {
  if (at === null || at === undefined) return '—';
  const date = new Date(at);
  if (Number.isNaN(date.getTime())) return String(at);
  const pad = (n: number) => String(n).padStart(2, '0');
  const day = `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
  const text = `${day} ${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
  const header = new Date(now()).getTimezoneOffset();
  return date.getTimezoneOffset() === header ? text : `${text} (UTC${offsetOf(date)})`;
}

/** `+01:00`: the browser zone's offset from UTC at `at`. */
function offsetOf(at: Date): string {
  const minutes = -at.getTimezoneOffset();
  const sign = minutes < 0 ? '-' : '+';
  const abs = Math.abs(minutes);
  return `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

/**
 * An instant on the wall clock of a zone whose UTC offset then was `offset` (`-05:00`, as `next` answers
 * it): `2026-12-08 09:00:00 (UTC-05:00)`. A next time's offset is its timer's zone's, not the browser's.
 */
export function formatInOffset(at: string, offset: string): string {
  const parts = /^([+-])(\d{2}):(\d{2})$/.exec(offset);
  const instant = Date.parse(at);
  if (!parts || Number.isNaN(instant)) return `${at} (${offset})`;
  const minutes = (parts[1] === '-' ? -1 : 1) * (Number(parts[2]) * 60 + Number(parts[3]));
  const wall = new Date(instant + minutes * 60_000).toISOString();
  return `${wall.slice(0, 10)} ${wall.slice(11, 19)} (UTC${offset})`;
}

/**
 * When the page read what it shows, on the scheduler's clock (the answer just noted it): a page left open
 * keeps its "in 5 min" as it was, and nothing said how old it was until Refresh drew it again.
 */
export function readAt(): string {
  return `Read at ${formatTime(now())}: relative times count from then; Refresh reads again.`;
}

/** The browser's zone and its offset now, e.g. `Europe/Paris (UTC+01:00)`: what formatTime shows. */
export function browserZone(at = new Date(now())): string {
  return `${Intl.DateTimeFormat().resolvedOptions().timeZone} (UTC${offsetOf(at)})`;
}

/** "in 4 min", "12 s ago": relative to the scheduler's now (clock.ts), for the list and the timeline. */
export function relative(at: number, from = now()): string {
  const ms = at - from;
  const text = durationText(Math.abs(ms));
  return ms >= 0 ? `in ${text}` : `${text} ago`;
}

/** The schedule in words, from the one source the CLI uses too (libs/core/src/browser). */
export { scheduleText as schedule } from './duration-text.js';

/** The last run's outcome in a few words. */
export function lastRun(timer: Timer): string {
  const last = timer.last;
  if (!last) return '—';
  if (last.status !== 'failed') return last.status;
  return `failed: ${last.error?.reason ?? last.error?.message ?? 'unknown'}`;
}

// libs/core/src/browser: modules with no imports, which the operator UI's own build also compiles and
// the browser loads beside the UI's modules (apps/scheduler/ui/tsconfig.json `rootDirs`), so the UI and
// the CLI word things alike from one source.

const TEXT_UNITS: [number, string][] = [
  [86_400_000, 'd'],
  [3_600_000, 'h'],
  [60_000, 'min'],
  [1000, 's'],
];

/**
 * A length of time for people to read, in its largest whole-enough unit: `"300 ms"`, `"30 s"`,
 * `"1.5 h"`, `"14 d"` (one decimal under 10). The words of the CLI and of the operator UI.
 */
export function durationText(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  const [size, unit] = TEXT_UNITS.find(([size]) => ms >= size)!;
  const value = ms / size;
  return `${value >= 10 ? Math.round(value) : Math.round(value * 10) / 10} ${unit}`;
}

/** What `scheduleText` reads of a timer (the API's Timer and the UI's own type both have it). */
export interface ScheduleFields {
  cron?: string;
  tz?: string;
  everyMs?: number;
}

/**
 * A timer's schedule in words, as the CLI and the operator UI write it: `"cron 0 7 * * 1-5
 * (America/Toronto)"`, `"every 30 s"` (`durationText`), `"once"`.
 */
export function scheduleText(timer: ScheduleFields): string {
  if (timer.cron) return `cron ${timer.cron}${timer.tz ? ` (${timer.tz})` : ''}`;
  if (timer.everyMs !== undefined) return `every ${durationText(timer.everyMs)}`;
  return 'once';
}

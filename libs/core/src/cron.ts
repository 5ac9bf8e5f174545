import { CronExpressionParser, type CronExpression } from 'cron-parser';
import { closestName } from './closest-name';
import { SundialError } from './errors';
import { showValue } from './show-value';
import { isTimeZone, nextOffsetChange, zoneOffset } from './time-zone';

const DAY_MS = 86_400_000;
/** How far ahead an expression must occur to be accepted (SPEC §2: "in the next 4 years"). */
const HORIZON_MS = 4 * 366 * DAY_MS;
const CRON_FORMAT =
  'five fields "minute hour day-of-month month day-of-week" (or six with leading seconds), e.g. "0 7 * * MON-FRI"';

/** Throws `invalid` (field `tz` or `cron`) unless `expr` parses and occurs within 4 years in `tz`. */
export function validateCron(expr: string, tz: string): void {
  nextCronOccurrence(expr, tz, Date.now());
}

/**
 * The first occurrence of `expr` strictly after `afterMs`, read on the wall clock of `tz` (SPEC §3.3).
 *
 * The zone's timeline is walked one constant-offset segment at a time. Inside a segment wall time
 * and instant move together, so the first matching wall time is the answer unless the offset changes
 * before it; then the search restarts at the change, on the new wall clock. That is why a wall time
 * in a spring-forward gap never runs and one in a fall-back overlap runs once per pass.
 */
export function nextCronOccurrence(expr: string, tz: string, afterMs: number): number {
  const pattern = compile(expr, tz);
  const limit = afterMs + HORIZON_MS;
  let from = Math.floor(afterMs) + 1;
  while (from <= limit) {
    const offset = zoneOffset(tz, from);
    const wall = pattern.firstAtOrAfter(from + offset, limit + offset);
    if (wall === null || wall - offset > limit) break;
    const change = nextOffsetChange(tz, from, wall - offset);
    if (change === null) return wall - offset;
    from = change;
  }
  throw new SundialError({
    reason: 'invalid',
    field: 'cron',
    message: `cron ${showValue(expr)} does not occur in the 4 years after ${new Date(afterMs).toISOString()}`,
    fix: 'Write a cron expression that occurs at least once every 4 years, e.g. "0 0 28 2 *" rather than a day that does not exist.',
  });
}

function compile(expr: string, tz: string): WallPattern {
  if (typeof tz !== 'string' || !isTimeZone(tz)) throw unknownZone(tz);
  if (typeof expr !== 'string') throw badCron(expr, 'it is not a string');
  const text = expr.trim();
  const fields = text === '' ? [] : text.split(/\s+/);
  if (!text.startsWith('@') && fields.length !== 5 && fields.length !== 6) {
    throw badCron(expr, `it has ${fields.length} fields`);
  }
  // `H` picks a random value per parse: each re-arm would move the schedule.
  if (fields.some((field) => field.split(',').some((item) => /^h/i.test(item)))) {
    throw badCron(
      expr,
      '"H" (a random value) is not supported',
      'Write the value itself, e.g. "17 * * * *".',
    );
  }
  try {
    // Parsed in UTC: the pattern is matched against wall times written as UTC instants.
    return new WallPattern(CronExpressionParser.parse(expr, { tz: 'UTC' }));
  } catch (error) {
    const detail = (error as Error).message;
    if (detail === 'Invalid explicit day of month definition') {
      throw badCron(
        expr,
        'that day never occurs in those months',
        'Write a day that exists, e.g. "0 0 28 2 *".',
      );
    }
    throw badCron(expr, detail);
  }
}

/** A parsed expression matched against wall-clock times (epoch ms read as if the zone were UTC). */
class WallPattern {
  private readonly seconds: number[];
  private readonly minutes: number[];
  private readonly hours: number[];
  private readonly months: ReadonlySet<number>;
  /** The earliest time of day the pattern allows, in ms; used to ask cron-parser about a whole day. */
  private readonly firstTimeMs: number;

  constructor(private readonly expression: CronExpression) {
    const { second, minute, hour, month } = expression.fields;
    [this.seconds, this.minutes, this.hours] = [second, minute, hour].map((field) =>
      [...field.values].map(Number).sort((a, b) => a - b),
    );
    this.months = new Set(month.values.map(Number));
    this.firstTimeMs = ((this.hours[0] * 60 + this.minutes[0]) * 60 + this.seconds[0]) * 1000;
  }

  /** The first matching wall time (a whole second) at or after `wall`, or null past `limit`. */
  firstAtOrAfter(wall: number, limit: number): number | null {
    let start = Math.ceil(wall / 1000) * 1000;
    while (start <= limit) {
      const date = new Date(start);
      const [year, month, day] = [date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate()];
      if (!this.months.has(month + 1)) {
        start = Date.UTC(year, month + 1, 1);
        continue;
      }
      const dayStart = Date.UTC(year, month, day);
      if (this.expression.includesDate(new Date(dayStart + this.firstTimeMs))) {
        const second = this.firstSecondOfDay((start - dayStart) / 1000);
        if (second !== null) return dayStart + second * 1000;
      }
      start = dayStart + DAY_MS;
    }
    return null;
  }

  /** The first allowed second of the day at or after `from` (seconds since midnight), or null. */
  private firstSecondOfDay(from: number): number | null {
    const [h0, m0, s0] = [Math.floor(from / 3600), Math.floor(from / 60) % 60, from % 60];
    for (const h of this.hours) {
      if (h < h0) continue;
      for (const m of this.minutes) {
        if (h === h0 && m < m0) continue;
        for (const s of this.seconds) {
          if (h === h0 && m === m0 && s < s0) continue;
          return (h * 60 + m) * 60 + s;
        }
      }
    }
    return null;
  }
}

function badCron(expr: unknown, why: string, fix = `Write ${CRON_FORMAT}.`): SundialError {
  return new SundialError({
    reason: 'invalid',
    field: 'cron',
    message: `cron ${showValue(expr)} is not a valid cron expression: ${why}`,
    fix,
  });
}

function unknownZone(tz: unknown): SundialError {
  const guess = typeof tz === 'string' ? closestName(tz, Intl.supportedValuesOf('timeZone')) : null;
  return new SundialError({
    reason: 'invalid',
    field: 'tz',
    message: `tz ${showValue(tz)} is not a known IANA time zone`,
    fix: guess
      ? `Did you mean "${guess}"? Write tz as an IANA zone name.`
      : 'Write tz as an IANA zone name such as "America/Toronto", "Europe/Berlin" or "UTC".',
  });
}

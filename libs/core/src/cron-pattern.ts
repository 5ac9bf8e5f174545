import { LAST, parseCron, type CronFields } from './cron-syntax';

const DAY_MS = 86_400_000;

/**
 * A parsed expression matched against wall-clock times: epoch ms read as if the zone were UTC, so
 * the calendar arithmetic here knows nothing of zones.
 */
export class WallPattern {
  private readonly fields: CronFields;

  constructor(expr: string) {
    this.fields = parseCron(expr);
  }

  /** Its wall times are fixed times (an hour written as values): a DST change runs each once (§3.3). */
  get fixedHour(): boolean {
    return this.fields.fixedHour;
  }

  /** The first matching wall time (a whole second) at or after `wall`, or null past `limit`. */
  firstAtOrAfter(wall: number, limit: number): number | null {
    for (let start = this.onMatchingDay(Math.ceil(wall / 1000) * 1000, limit); start !== null;) {
      const dayStart = Math.floor(start / DAY_MS) * DAY_MS;
      const second = this.firstSecondOfDay((start - dayStart) / 1000);
      if (second !== null) return dayStart + second * 1000;
      start = this.onMatchingDay(dayStart + DAY_MS, limit);
    }
    return null;
  }

  /**
   * How many matching wall times (whole seconds) lie in [from, to]: per day, the day's allowed seconds in
   * the range, counted by field rather than one by one (a year of a per-second cron is 365 short steps).
   */
  countBetween(from: number, to: number): number {
    const end = Math.floor(to / 1000) * 1000;
    let count = 0;
    for (let start = this.onMatchingDay(Math.ceil(from / 1000) * 1000, end); start !== null;) {
      const dayStart = Math.floor(start / DAY_MS) * DAY_MS;
      const last = (Math.min(end, dayStart + DAY_MS - 1000) - dayStart) / 1000;
      count += this.secondsUpTo(last) - this.secondsUpTo((start - dayStart) / 1000 - 1);
      start = this.onMatchingDay(dayStart + DAY_MS, end);
    }
    return count;
  }

  /**
   * The allowed seconds of a matching day (the same on every such day): the first, the last, and the
   * shortest gap between two in a row (Infinity when there is one), read a minute at a time.
   */
  daySeconds(): { first: number; last: number; gap: number } {
    const { hours, minutes, seconds } = this.fields;
    let gap = Infinity;
    for (let i = 1; i < seconds.length; i++) gap = Math.min(gap, seconds[i] - seconds[i - 1]);
    const [earliest, latest] = [seconds[0], seconds[seconds.length - 1]];
    let previous = -1;
    let first = 0;
    for (const h of hours) {
      for (const m of minutes) {
        const minute = (h * 60 + m) * 60;
        if (previous < 0) first = minute + earliest;
        else gap = Math.min(gap, minute + earliest - (previous + latest));
        previous = minute;
      }
    }
    return { first, last: previous + latest, gap };
  }

  /** The start of the first matching day in [from, to] (wall ms, day starts) whose next day matches too, or null. */
  firstOfTwoDays(from: number, to: number): number | null {
    for (let day = this.onMatchingDay(from, to); day !== null;) {
      const next = this.onMatchingDay(day + DAY_MS, to + DAY_MS);
      if (next === day + DAY_MS) return day;
      day = next === null || next > to ? null : next;
    }
    return null;
  }

  /**
   * `start` when its day is one the month and day fields allow, else the start of the next such day; null
   * past `limit`. (Wall ms: a day is 86,400,000 of them, its start a multiple.)
   */
  private onMatchingDay(start: number, limit: number): number | null {
    while (start <= limit) {
      const date = new Date(start);
      const [year, month, day] = [date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate()];
      if (!this.fields.months[month + 1]) {
        start = Date.UTC(year, month + 1, 1);
        continue;
      }
      if (this.dayMatches(year, month, day, date.getUTCDay())) return start;
      start = Date.UTC(year, month, day) + DAY_MS;
    }
    return null;
  }

  /** How many allowed seconds of a matching day come at or before `second` (since midnight). */
  private secondsUpTo(second: number): number {
    if (second < 0) return 0;
    const { hours, minutes, seconds } = this.fields;
    const [h0, m0, s0] = [Math.floor(second / 3600), Math.floor(second / 60) % 60, second % 60];
    let count = 0;
    for (const h of hours) {
      if (h > h0) break;
      if (h < h0) {
        count += minutes.length * seconds.length;
        continue;
      }
      for (const m of minutes) {
        if (m > m0) break;
        if (m < m0) count += seconds.length;
        else count += seconds.filter((s) => s <= s0).length;
      }
    }
    return count;
  }

  /** Both day fields restricted: a day matching either runs; one restricted: that one decides. */
  private dayMatches(year: number, month: number, day: number, weekday: number): boolean {
    const { days, lastDay, weekdays, dayRestricted, weekdayRestricted } = this.fields;
    const length = monthLength(year, month);
    const byDay = days[day] || (lastDay && day === length);
    // The day is the n-th such weekday of the month (bit n-1), and perhaps the last one (LAST).
    const occurrence = (1 << Math.floor((day - 1) / 7)) | (day + 7 > length ? LAST : 0);
    const byWeekday = (weekdays[weekday] & occurrence) !== 0;
    if (dayRestricted && weekdayRestricted) return byDay || byWeekday;
    if (dayRestricted) return byDay;
    return !weekdayRestricted || byWeekday;
  }

  /** The first allowed second of the day at or after `from` (seconds since midnight), or null. */
  private firstSecondOfDay(from: number): number | null {
    const { hours, minutes, seconds } = this.fields;
    const [h0, m0, s0] = [Math.floor(from / 3600), Math.floor(from / 60) % 60, from % 60];
    for (const h of hours) {
      if (h < h0) continue;
      for (const m of minutes) {
        if (h === h0 && m < m0) continue;
        for (const s of seconds) {
          if (h === h0 && m === m0 && s < s0) continue;
          return (h * 60 + m) * 60 + s;
        }
      }
    }
    return null;
  }
}

const MONTH_LENGTHS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function monthLength(year: number, month: number): number {
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return month === 1 && leap ? 29 : MONTH_LENGTHS[month];
}

/**
 * Reads a cron expression into the sets of values it allows (docs/spec.md §3.3). Our own reader, so
 * what is accepted is pinned by our tests rather than by a parser's patch version.
 */
import { SundialError } from './errors';
import { showValue } from './show-value';

/** What an expression allows; every set is indexed by the field's value. */
export interface CronFields {
  /** sorted ascending, each value once */
  readonly seconds: readonly number[];
  readonly minutes: readonly number[];
  readonly hours: readonly number[];
  /**
   * The hour is written as one value or a list of values (`2`, `1,13`), not `*`, `?`, a range or a step:
   * its wall times are fixed times, which a DST change runs once (docs/spec.md §3.3).
   */
  readonly fixedHour: boolean;
  /** index 1..31 */
  readonly days: readonly boolean[];
  /** `L` in day-of-month: the month's last day */
  readonly lastDay: boolean;
  /** index 1..12 */
  readonly months: readonly boolean[];
  /** index 0..6 (Sunday 0): which occurrences in the month run, a mask of OCCURRENCE bits and LAST */
  readonly weekdays: readonly number[];
  /** a day field is restricted unless it is `*` (or `?`): `*\/2` and `1-31` are restricted */
  readonly dayRestricted: boolean;
  readonly weekdayRestricted: boolean;
}

/** Bit k-1 is the k-th such weekday of the month (`#k`); LAST is the last one (`L`). */
export const LAST = 1 << 5;
const EVERY_OCCURRENCE = 0b11111;

export const CRON_FORMAT =
  'five fields "minute hour day-of-month month day-of-week" (or six with leading seconds), e.g. "0 7 * * MON-FRI"';
const MAX_LENGTH = 1024;

const MACROS: Readonly<Record<string, string>> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
  '@minutely': '* * * * *',
  '@secondly': '* * * * * *',
  '@weekdays': '0 0 * * 1-5',
  '@weekends': '0 0 * * 0,6',
};

interface Field {
  name: string;
  min: number;
  max: number;
  names?: readonly string[];
  /**
   * The unit a value belongs to. A range in a field without one may run past the end back to the
   * start (`FRI-MON`, `NOV-FEB`); in the others a wrapped range would stay inside the same unit.
   */
  within?: string;
}

const SECOND: Field = { name: 'second', min: 0, max: 59, within: 'minute' };
const MINUTE: Field = { name: 'minute', min: 0, max: 59, within: 'hour' };
const HOUR: Field = { name: 'hour', min: 0, max: 23, within: 'day' };
const DAY: Field = { name: 'day-of-month', min: 1, max: 31, within: 'month' };
const MONTH: Field = {
  name: 'month',
  min: 1,
  max: 12,
  names: ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'],
};
/** 0 and 7 are both Sunday. */
const WEEKDAY: Field = {
  name: 'day-of-week',
  min: 0,
  max: 7,
  names: ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'],
};
const MONTH_DAYS = [0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Reads `expr`; throws `invalid` (field `cron`) with the reason and a fix. */
export function parseCron(expr: string): CronFields {
  if (expr.length > MAX_LENGTH) throw badCron(expr, `it is longer than ${MAX_LENGTH} characters`);
  let text = expr.trim();
  if (text.startsWith('@')) {
    const macro = MACROS[text.toLowerCase()];
    if (macro === undefined) {
      throw badCron(
        expr,
        `${showValue(text)} is not a known macro`,
        `Write one of ${Object.keys(MACROS).join(', ')}, or ${CRON_FORMAT}.`,
      );
    }
    text = macro;
  }
  const parts = text === '' ? [] : text.split(/\s+/);
  if (parts.length !== 5 && parts.length !== 6) throw badCron(expr, `it has ${parts.length} fields`);
  if (parts.length === 5) parts.unshift('0');
  // `H` picks a random value per parse: each re-arm would move the schedule.
  if (parts.some((part) => part.split(',').some((item) => /^h/i.test(item)))) {
    throw badCron(
      expr,
      '"H" (a random value) is not supported',
      'Write the value itself, e.g. "17 * * * *".',
    );
  }
  const [second, minute, hour, day, month, weekday] = parts;
  const read = (field: Field, part: string) => new FieldReader(expr, field, part).values();
  const fields: CronFields = {
    seconds: sorted(read(SECOND, second)),
    minutes: sorted(read(MINUTE, minute)),
    hours: sorted(read(HOUR, hour)),
    fixedHour: hour.split(',').every((item) => /^\d+$/.test(item)),
    ...readDays(expr, day),
    months: flags(read(MONTH, month), 12),
    weekdays: readWeekdays(expr, weekday),
    dayRestricted: restricted(day),
    weekdayRestricted: restricted(weekday),
  };
  if (fields.dayRestricted && !fields.weekdayRestricted && !dayOccurs(fields)) {
    throw badCron(
      expr,
      'that day never occurs in those months',
      'Write a day that exists, e.g. "0 0 28 2 *".',
    );
  }
  return fields;
}

function restricted(part: string): boolean {
  return part !== '*' && part !== '?';
}

function readDays(expr: string, part: string): Pick<CronFields, 'days' | 'lastDay'> {
  const items = part.split(',');
  const lastDay = items.some((item) => item.toUpperCase() === 'L');
  const rest = items.filter((item) => item.toUpperCase() !== 'L');
  const days = rest.length === 0 ? [] : new FieldReader(expr, DAY, rest.join(',')).values();
  return { days: flags(days, 31), lastDay };
}

/** Plain items run every such weekday; `v#k` only the k-th of the month, `vL` only the last. */
function readWeekdays(expr: string, part: string): number[] {
  const masks = new Array<number>(7).fill(0);
  const plain: string[] = [];
  for (const item of part.split(',')) {
    const special = /^(.*?)(?:#(.*)|L)$/i.exec(item);
    if (!special) {
      plain.push(item);
      continue;
    }
    const reader = new FieldReader(expr, WEEKDAY, part);
    if (special[1] === '') {
      throw reader.refuse(
        `${showValue(item)} needs a weekday before it`,
        'Write e.g. "0 9 * * FRIL" (or 5L) for the last Friday of the month.',
      );
    }
    const day = reader.single(special[1]) % 7;
    masks[day] |= special[2] === undefined ? LAST : 1 << (reader.occurrence(special[2]) - 1);
  }
  if (plain.length > 0) {
    for (const day of new FieldReader(expr, WEEKDAY, plain.join(',')).values())
      masks[day % 7] = EVERY_OCCURRENCE | LAST;
  }
  return masks;
}

/** Whether some selected month has some selected day (February counted with its 29th). */
function dayOccurs(fields: CronFields): boolean {
  if (fields.lastDay) return fields.months.some(Boolean);
  return MONTH_DAYS.some(
    (length, month) => fields.months[month] && fields.days.slice(1, length + 1).some(Boolean),
  );
}

/** Reads one field: a list of `*`, `?`, values, names and ranges, each with an optional `/step`. */
class FieldReader {
  constructor(
    private readonly expr: string,
    private readonly field: Field,
    private readonly part: string,
  ) {}

  values(): number[] {
    const found: number[] = [];
    for (const item of this.part.split(',')) found.push(...this.item(item));
    return found;
  }

  single(text: string): number {
    const value = this.value(text);
    if (value === null) throw this.refuse(`${showValue(text)} is not a ${this.field.name} value`);
    return value;
  }

  occurrence(text: string): number {
    if (!/^[1-5]$/.test(text)) {
      throw this.refuse(
        `"#${text}" must be #1 to #5 (which such weekday of the month)`,
        'Write e.g. "0 9 * * MON#2" for the second Monday.',
      );
    }
    return Number(text);
  }

  private item(item: string): number[] {
    const [base, step, ...extra] = item.split('/');
    if (extra.length > 0 || base === '')
      throw this.refuse(`${showValue(item)} is not a value, range or step`);
    const every = step === undefined ? 1 : this.step(step, item);
    const { min, max } = this.field;
    // `*` covers one cycle: Sunday once, as 0.
    if (base === '*' || base === '?') return this.walk(min, this.field === WEEKDAY ? 6 : max, every);
    const bounds = base.split('-');
    if (bounds.length > 2) throw this.refuse(`${showValue(item)} is not a value, range or step`);
    const from = this.single(bounds[0]);
    const to = bounds.length === 2 ? this.single(bounds[1]) : step === undefined ? from : max;
    return this.range(from, to, every, item);
  }

  private range(from: number, to: number, every: number, item: string): number[] {
    const { min, max, within, name } = this.field;
    // Sunday as 7 starts a range as Sunday 0: 7-2 is Sunday to Tuesday.
    if (this.field === WEEKDAY && from === 7 && to < 7) from = 0;
    if (from <= to) return this.walk(from, to, every);
    if (within) {
      throw this.refuse(
        `the range ${showValue(item)} runs backwards: a ${name} range does not wrap past ${max} to ${min} (it would run at the start of the same ${within}, not into the next)`,
        `Write it as two ranges, "${from}-${max},${min}-${to}".`,
      );
    }
    // Past the end and round again: SAT-SUN is Saturday and Sunday, NOV-FEB is November to February.
    const top = this.field === WEEKDAY ? 6 : max;
    const cycle = [...this.walk(from, top, 1), ...this.walk(min, to, 1)];
    return cycle.filter((_, index) => index % every === 0);
  }

  private walk(from: number, to: number, every: number): number[] {
    const values: number[] = [];
    for (let value = from; value <= to; value += every) values.push(value);
    return values;
  }

  private step(text: string, item: string): number {
    if (!/^\d+$/.test(text) || Number(text) < 1) {
      throw this.refuse(`the step in ${showValue(item)} must be a whole number from 1`);
    }
    return Number(text);
  }

  private value(text: string): number | null {
    const named = this.field.names?.indexOf(text.toUpperCase()) ?? -1;
    if (named >= 0) return named + this.field.min;
    if (!/^\d+$/.test(text)) return null;
    const value = Number(text);
    const { min, max, name } = this.field;
    if (value < min || value > max) throw this.refuse(`${text} is outside ${min}-${max}, the ${name} range`);
    return value;
  }

  refuse(why: string, fix?: string): SundialError {
    return badCron(this.expr, `${why} (${this.field.name} field ${showValue(this.part)})`, fix);
  }
}

function sorted(values: number[]): number[] {
  return [...new Set(values)].sort((a, b) => a - b);
}

function flags(values: number[], top: number): boolean[] {
  const set = new Array<boolean>(top + 1).fill(false);
  for (const value of values) set[value] = true;
  return set;
}

export function badCron(expr: unknown, why: string, fix = `Write ${CRON_FORMAT}.`): SundialError {
  return new SundialError({
    reason: 'invalid',
    field: 'cron',
    message: `cron ${showValue(expr)} is not a valid cron expression: ${why}`,
    fix,
  });
}

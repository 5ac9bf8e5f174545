import { createRequire } from 'node:module';
import { join } from 'node:path';
import { occurrences } from '../../../test/engine/cron-cases';

/**
 * README "Coming from @nestjs/schedule" says every value of its `CronExpression` enum reads the same in
 * Sundial. Checked against the real thing: the enum of @nestjs/schedule (a devDependency, for this test
 * alone) and the `cron` package it runs them with.
 */
const PACKAGE = join(process.cwd(), 'node_modules/@nestjs/schedule');
/**
 * Whole-hour DST zones and one without DST. Not Australia/Lord_Howe: on its half-hour fall-back the cron
 * package runs "02:00" at the instant the clock is turned back to 01:30 (15:00Z), Sundial when the
 * clock reads 02:00 (15:30Z).
 */
const ZONES = ['UTC', 'America/Toronto', 'Europe/Berlin', 'Asia/Kolkata'];

interface CronTimeClass {
  new (
    expression: string,
    timeZone?: string,
  ): {
    getNextDateFrom(start: Date, timeZone?: string): { toMillis(): number };
  };
}

function load(): { expressions: [string, string][]; CronTime: CronTimeClass } {
  // Node's own require (ES modules included, Node >= 22.12), by path: the package's exports name no enum file.
  const schedule = createRequire(join(PACKAGE, 'package.json'));
  const enumFile = join(PACKAGE, 'dist/enums/cron-expression.enum.js');
  const { CronExpression } = schedule(enumFile) as { CronExpression: Record<string, string> };
  const { CronTime } = schedule('cron') as { CronTime: CronTimeClass };
  return { expressions: Object.entries(CronExpression), CronTime };
}

/** The next `count` times of `expression` after `from` as the `cron` package computes them. */
function theirs(CronTime: CronTimeClass, expression: string, tz: string, from: string, count: number) {
  const time = new CronTime(expression, tz);
  const found: string[] = [];
  let after = new Date(from);
  for (let i = 0; i < count; i++) {
    after = new Date(time.getNextDateFrom(after, tz).toMillis());
    found.push(after.toISOString());
  }
  return found;
}

/** `time` is the instant the offset of `tz` changes at, growing (a spring-forward gap ends) or shrinking (a fall-back). */
function changesAt(time: string, tz: string): 'gap-end' | 'fall-back' | null {
  const [before, after] = [offsetMinutes(tz, Date.parse(time) - 1), offsetMinutes(tz, Date.parse(time))];
  return after > before ? 'gap-end' : after < before ? 'fall-back' : null;
}

/** The wall clock of `tz` at `time` (as UTC ms), read with the offset in force at `time + shift`. */
function wallAt(time: string, tz: string, shift = 0): number {
  return Date.parse(time) + offsetMinutes(tz, Date.parse(time) + shift) * 60_000;
}

/**
 * The documented deviations (docs/spec.md §3.3 "Versus @nestjs/schedule"). For every expression: a wall
 * time of the old offset that the cron package runs at the instant of a fall-back, when the clock
 * already reads an hour earlier (a bug of the cron package), and Sundial runs when the clock reads it.
 * Only where the hour is `*`, a range or a step (not a fixed time, §3.3): a wall time a spring-forward
 * skips, which the cron package runs at the gap's end and Sundial not, and a wall time a fall-back
 * repeats, which Sundial runs twice. A fixed hour (`0 01 * * *`, EVERY_DAY_AT_1AM) has no other deviation.
 */
function deviations(expression: string, ours: string[], cron: string[], tz: string) {
  const atChange = (time: string) => changesAt(time, tz) !== null;
  const cronOnly = cron.filter(
    (time) =>
      !ours.includes(time) &&
      (changesAt(time, tz) === 'fall-back' || (!fixedHour(expression) && atChange(time))),
  );
  const early = cronOnly
    .filter((time) => changesAt(time, tz) === 'fall-back')
    .map((time) => wallAt(time, tz, -1));
  const repeated = (time: string) =>
    !fixedHour(expression) && ours.some((other) => other !== time && wallAt(other, tz) === wallAt(time, tz));
  const oursOnly = ours.filter(
    (time) => !cron.includes(time) && (repeated(time) || early.includes(wallAt(time, tz))),
  );
  return { ours: oursOnly, cron: cronOnly };
}

/** The hour field is written as values (no `*`, range or step): its times are fixed times (§3.3). */
function fixedHour(expression: string): boolean {
  const fields = expression.trim().split(/\s+/);
  return fields[fields.length - 4].split(',').every((item) => /^\d+$/.test(item));
}

function offsetMinutes(tz: string, at: number): number {
  const name = new Intl.DateTimeFormat('en-US', { timeZone: tz, timeZoneName: 'longOffset' })
    .formatToParts(at)
    .find((part) => part.type === 'timeZoneName')!.value;
  const match = /GMT(?:([+-])(\d\d):(\d\d))?/.exec(name)!;
  return match[1] === undefined
    ? 0
    : (match[1] === '-' ? -1 : 1) * (Number(match[2]) * 60 + Number(match[3]));
}

describe("@nestjs/schedule's CronExpression", () => {
  const { expressions, CronTime } = load();

  it('has values to compare', () => {
    expect(expressions.length).toBeGreaterThan(50);
  });

  it.each(expressions)(
    '%s (%j) gives the times the cron package gives, in UTC and three zones',
    (_name, expression) => {
      for (const tz of ZONES) {
        // from the days before America's and Europe's switches to summer and winter time (each also reads
        // days of one season; the cron package's CPU is most of this suite's time)
        for (const from of [
          '2026-03-07T12:00:00Z',
          '2026-03-28T12:00:00Z',
          '2026-10-24T12:00:00Z',
          '2026-10-31T12:00:00Z',
        ]) {
          const ours = occurrences(expression, tz, from, 8);
          const cron = theirs(CronTime, expression, tz, from, 8);
          const until = [ours, cron].map((times) => times.at(-1)!).sort()[0];
          const apart = deviations(expression, ours, cron, tz);
          expect([tz, from, ours.filter((time) => time <= until && !apart.ours.includes(time))]).toEqual([
            tz,
            from,
            cron.filter((time) => time <= until && !apart.cron.includes(time)),
          ]);
        }
      }
    },
  );
});

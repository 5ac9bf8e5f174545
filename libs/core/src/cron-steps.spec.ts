import { nextCronOccurrence, validateCron } from './cron';

// A step larger than its field's range (every 70th second, `*` then `/70`) is accepted and selects
// the range's start only, as the `cron` package of @nestjs/schedule (4.x, `CronTime`) reads it: it
// refuses a step of 0 and values out of range, never a step, and walks from the start by the step up
// to the field's end. A Nest team moving a `@Cron` to `@DistributedCron` keeps the slots it had.
describe('cron steps larger than the field', () => {
  const from = Date.parse('2026-01-01T00:00:10.500Z');

  it.each([
    ['*/70 * * * * *', '2026-01-01T00:01:00.000Z'],
    ['5/70 * * * * *', '2026-01-01T00:01:05.000Z'],
    ['0-10/70 * * * * *', '2026-01-01T00:01:00.000Z'],
    ['0 */25 * * *', '2026-01-02T00:00:00.000Z'],
    ['0 0 */32 * *', '2026-02-01T00:00:00.000Z'],
    ['0 0 1 */13 *', '2027-01-01T00:00:00.000Z'],
  ])('%j is accepted and next runs at %s, as cron 4 runs it', (expr, next) => {
    expect(() => validateCron(expr, 'UTC')).not.toThrow();
    expect(new Date(nextCronOccurrence(expr, 'UTC', from)).toISOString()).toBe(next);
  });
});

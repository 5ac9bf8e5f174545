import { normalizeSpec, normalizeWhen } from './validation';
import { base, once, refusalOf } from '../../../test/engine/validation-cases';

/** docs/spec.md §2 "Spec rules": a field another scheduler names otherwise is refused with Sundial's name. */
describe('a field named as another scheduler names it', () => {
  it.each<[string, Record<string, unknown>, string, RegExp]>([
    [
      "BullMQ's data",
      { ...once, data: { a: 1 } },
      'data',
      /^BullMQ's "data" is "payload" here: rename the field "data" to "payload"\.$/,
    ],
    ["BullMQ's jobId", { ...base, delay: 5, jobId: 'j1' }, 'jobId', /^BullMQ's "jobId" is "key" here/],
    [
      "BullMQ's repeat",
      { ...once, repeat: { every: 1000 } },
      'repeat',
      /"every" or "cron" here: write the one you mean instead \("every" for an interval, "cron" with "tz" for a cron\)\.$/,
    ],
    [
      "BullMQ's attempts, a field of retry here",
      { ...base, every: '1m', attempts: 3 },
      'attempts',
      /^BullMQ's "attempts" is "retry\.attempts" here: move it into "retry", e\.g\. "retry": \{ "attempts": … \}\.$/,
    ],
    [
      "@nestjs/schedule's timeZone",
      { ...base, cron: '0 7 * * 1-5', timeZone: 'UTC' },
      'timeZone',
      /^@nestjs\/schedule's "timeZone" is "tz" here/,
    ],
    [
      "Temporal's cronExpressions",
      { ...base, cronExpressions: ['0 7 * * *'] },
      'cronExpressions',
      /^Temporal's "cronExpressions" is "cron" here/,
    ],
    [
      "an answer's dueAt sent back",
      { ...base, dueAt: 1_800_000_000_000 },
      'dueAt',
      /^a timer's answer's "dueAt" is "at" here/,
    ],
    [
      'in, two edits from at, means delay',
      { ...base, in: '5s' },
      'in',
      /^"in" is "delay" here: rename the field "in" to "delay"\.$/,
    ],
    [
      'name, which is key or handler',
      { ...once, name: 'x' },
      'name',
      /\("key" names the timer, "handler" the code it runs\)/,
    ],
  ])('%s', (_name, spec, field, fix) => {
    const error = refusalOf(() => normalizeSpec(spec));
    expect(error).toMatchObject({ reason: 'invalid', field });
    expect(error.fix).toMatch(fix);
  });

  it('names only a field the object takes: in a when object, `runAt` is `at`, `repeat` nothing known', () => {
    expect(refusalOf(() => normalizeWhen({ runAt: 5 })).fix).toMatch(/^"runAt" is "at" here/);
    expect(refusalOf(() => normalizeWhen({ repeat: 5 })).fix).toMatch(
      /^Remove "repeat"; the known fields are delay, at\./,
    );
  });

  it('finds nothing for a name an object inherits', () => {
    expect(refusalOf(() => normalizeSpec({ ...once, constructor: 1 })).fix).toMatch(/^Remove "constructor"/);
  });

  it('keeps the closest spelling for a typo', () => {
    expect(refusalOf(() => normalizeSpec({ ...base, dealy: '5m' })).fix).toMatch(/^Did you mean "delay"\?/);
  });
});

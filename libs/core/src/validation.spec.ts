import { DEFAULT_LIMITS, normalizeSpec, normalizeWhen, validateKey, validateScope } from './validation';
import { SundialError } from './errors';
import type { NormalizedSpec } from './types';

const base = { key: 'invoice:42:remind', handler: 'invoice.remind' };
const once = { ...base, delay: '3d' };

function refusalOf(run: () => unknown): SundialError {
  try {
    run();
  } catch (error) {
    if (error instanceof SundialError) return error;
    throw error;
  }
  throw new Error('expected a refusal, but the call succeeded');
}

interface Expected {
  reason?: 'invalid' | 'payload-too-large';
  field: string | undefined;
  message?: string | RegExp;
  fix?: string | RegExp;
}

class Point {
  constructor(readonly x: number) {}
}
const cycle: Record<string, unknown> = { name: 'loop' };
cycle.self = { back: cycle };

/** One row per case of docs/spec.md §2's validation table that concerns input. */
const refusals: [string, unknown, Expected][] = [
  // the schedule: exactly one of delay, at, every, cron
  [
    'no schedule at all',
    base,
    { field: undefined, message: /none of delay, at, every, cron/, fix: /exactly one/ },
  ],
  ['delay and every', { ...base, delay: '1m', every: '1m' }, { field: 'every', message: /delay and every/ }],
  [
    'at, every and cron',
    { ...base, at: 0, every: '1m', cron: '* * * * *' },
    { field: 'every', fix: /^Keep only one of at, every and cron: / },
  ],
  [
    'cron without tz',
    { ...base, cron: '0 7 * * *' },
    { field: 'tz', message: /no tz/, fix: /America\/Toronto/ },
  ],
  ['tz without cron', { ...once, tz: 'UTC' }, { field: 'tz', fix: 'Remove tz: it only applies to cron.' }],
  [
    'an unknown zone',
    { ...base, cron: '0 7 * * *', tz: 'Europe/Berlim' },
    { field: 'tz', fix: /"Europe\/Berlin"/ },
  ],
  [
    'a cron that does not parse',
    { ...base, cron: '0 7 * *', tz: 'UTC' },
    { field: 'cron', message: /4 fields/ },
  ],
  [
    'a cron that is not a string',
    { ...base, cron: 7, tz: 'UTC' },
    { field: 'cron', message: 'cron 7 is not a string' },
  ],
  [
    'a cron that never occurs',
    { ...base, cron: '0 0 30 2 *', tz: 'UTC' },
    { field: 'cron', message: /never occurs/ },
  ],
  [
    'a cron not in 4 years',
    { ...base, cron: '0 0 * 2 MON#5', tz: 'UTC' },
    { field: 'cron', message: /4 years/ },
  ],
  // delay and every
  [
    'a delay that is NaN',
    { ...base, delay: NaN },
    {
      field: 'delay',
      message: 'delay must be a finite number of milliseconds or a duration string, got NaN',
    },
  ],
  ['an infinite delay', { ...base, delay: Infinity }, { field: 'delay', message: /Infinity/ }],
  ['a negative delay', { ...base, delay: -1 }, { field: 'delay', message: 'delay -1 is negative' }],
  ['a delay with a unit typo', { ...base, delay: '1hr' }, { field: 'delay', fix: 'Write delay as "1h".' }],
  ['a delay that is a boolean', { ...base, delay: true }, { field: 'delay', message: /got true/ }],
  ['an infinite every', { ...base, every: -Infinity }, { field: 'every', message: /-Infinity/ }],
  ['a zero every', { ...base, every: 0 }, { field: 'every', message: 'every 0 is not positive' }],
  ['a negative every', { ...base, every: -1000 }, { field: 'every', message: /not positive/ }],
  ['every "0s"', { ...base, every: '0s' }, { field: 'every', message: /not positive/ }],
  [
    'every below the minimum',
    { ...base, every: 50 },
    { field: 'every', message: /minimum interval of 100 ms/, fix: /at least 100/ },
  ],
  ['every "99ms"', { ...base, every: '99ms' }, { field: 'every', fix: /"100ms"/ }],
  // at
  [
    'an ISO at without zone',
    { ...base, at: '2026-03-01T09:00:00' },
    { field: 'at', message: /no zone offset/, fix: /"2026-03-01T09:00:00Z"/ },
  ],
  ['a date-only at', { ...base, at: '2026-03-01' }, { field: 'at', fix: /"2026-03-01T00:00:00Z"/ }],
  [
    'an unparsable at',
    { ...base, at: 'tomorrow' },
    { field: 'at', message: 'at "tomorrow" is not a point in time' },
  ],
  [
    'an at on February 30',
    { ...base, at: '2026-02-30T09:00:00Z' },
    { field: 'at', message: /not a point in time/ },
  ],
  ['an at at 24:00', { ...base, at: '2026-03-01T24:00:00Z' }, { field: 'at' }],
  ['an at with offset +25:00', { ...base, at: '2026-03-01T09:00:00+25:00' }, { field: 'at' }],
  [
    'a non-finite numeric at',
    { ...base, at: NaN },
    { field: 'at', message: 'at NaN is not a point in time' },
  ],
  ['a negative numeric at', { ...base, at: -1 }, { field: 'at' }],
  ['an at beyond what a Date holds', { ...base, at: 9e15 }, { field: 'at' }],
  ['an at that is an object', { ...base, at: {} }, { field: 'at', message: /an object/ }],
  // maxRuns
  [
    'maxRuns 0',
    { ...base, every: '1m', maxRuns: 0 },
    { field: 'maxRuns', message: 'maxRuns 0 is not a positive integer' },
  ],
  ['maxRuns -2', { ...base, every: '1m', maxRuns: -2 }, { field: 'maxRuns' }],
  ['maxRuns 1.5', { ...base, every: '1m', maxRuns: 1.5 }, { field: 'maxRuns' }],
  ['maxRuns "3"', { ...base, every: '1m', maxRuns: '3' }, { field: 'maxRuns', message: /"3"/ }],
  ['maxRuns Infinity', { ...base, every: '1m', maxRuns: Infinity }, { field: 'maxRuns' }],
  ['maxRuns on a one-shot', { ...once, maxRuns: 2 }, { field: 'maxRuns', fix: /Remove maxRuns/ }],
  // key and handler
  ['an empty key', { ...once, key: '' }, { field: 'key', message: 'key is empty', fix: /1–256 characters/ }],
  [
    'a key with a space',
    { ...once, key: 'invoice 42' },
    { field: 'key', message: 'key "invoice 42" contains " " at position 8' },
  ],
  ['a key with non-ASCII', { ...once, key: 'rechnung:größe' }, { field: 'key', message: /"ö"/ }],
  [
    'a key of 257 characters',
    { ...once, key: 'k'.repeat(257) },
    { field: 'key', message: /257 characters long/ },
  ],
  ['a missing key', { handler: 'h', delay: 1 }, { field: 'key', message: 'key undefined is not a string' }],
  ['a numeric key', { ...once, key: 42 }, { field: 'key', message: 'key 42 is not a string' }],
  ['the key "."', { ...once, key: '.' }, { field: 'key', message: /URL dot-segment/ }],
  [
    'the key ".."',
    { ...once, key: '..' },
    { field: 'key', message: /URL dot-segment/, fix: /invoice:42:remind/ },
  ],
  [
    'an empty handler',
    { ...once, handler: '' },
    { field: 'handler', fix: /1–128 characters of letters, digits and : _ - \./ },
  ],
  ['a handler with a slash', { ...once, handler: 'invoice/remind' }, { field: 'handler', message: /"\/"/ }],
  ['a handler of 129 characters', { ...once, handler: 'h'.repeat(129) }, { field: 'handler' }],
  ['a missing handler', { key: 'k', delay: 1 }, { field: 'handler' }],
  // payload and meta
  [
    'a function in the payload',
    { ...once, payload: { run: () => 1 } },
    { field: 'payload', message: 'payload is not JSON: payload.run is a function' },
  ],
  [
    'undefined in a payload array',
    { ...once, payload: [1, undefined] },
    { field: 'payload', message: /payload\[1\] is undefined/ },
  ],
  [
    'a hole in a payload array',
    { ...once, payload: new Array(3) },
    { field: 'payload', message: /payload\[0\] is undefined/ },
  ],
  [
    'a BigInt in the payload',
    { ...once, payload: { n: 10n } },
    { field: 'payload', message: /payload.n is a bigint/, fix: /BigInt/ },
  ],
  ['a symbol in the payload', { ...once, payload: Symbol('s') }, { field: 'payload', message: /a symbol/ }],
  [
    'a cycle in the payload',
    { ...once, payload: cycle },
    { field: 'payload', message: /payload.self.back .*cycle/ },
  ],
  [
    'NaN in the payload',
    { ...once, payload: { ratio: NaN } },
    { field: 'payload', message: /payload.ratio is NaN/ },
  ],
  [
    'Infinity in the payload',
    { ...once, payload: [Infinity] },
    { field: 'payload', message: /payload\[0\] is Infinity/ },
  ],
  [
    'a Date in the payload',
    { ...once, payload: { when: new Date(0) } },
    { field: 'payload', message: /payload.when is a Date object/, fix: /toISOString/ },
  ],
  ['a Map in the payload', { ...once, payload: new Map() }, { field: 'payload', message: /a Map object/ }],
  [
    'a class instance in the payload',
    { ...once, payload: { p: new Point(1) } },
    { field: 'payload', message: /payload.p is a Point object/ },
  ],
  [
    'an odd key path in the payload',
    { ...once, payload: { 'a-b': [{ c: () => 0 }] } },
    { field: 'payload', message: /payload\["a-b"\]\[0\].c is a function/ },
  ],
  [
    'a payload nested too deep',
    { ...once, payload: JSON.parse('['.repeat(200) + ']'.repeat(200)) },
    { field: 'payload', message: /nested more than 100 levels/ },
  ],
  [
    'a payload over the limit',
    { ...once, payload: 'x'.repeat(DEFAULT_LIMITS.maxPayloadBytes) },
    {
      reason: 'payload-too-large',
      field: 'payload',
      message: 'payload is 65538 bytes as JSON; the limit is 65536 bytes',
      fix: /SUNDIAL_MAX_PAYLOAD_BYTES/,
    },
  ],
  [
    'a payload over the limit in UTF-8 bytes',
    { ...once, payload: 'é'.repeat(32_768) },
    {
      reason: 'payload-too-large',
      field: 'payload',
      message: 'payload is 65538 bytes as JSON; the limit is 65536 bytes',
    },
  ],
  [
    // 6 bytes per character as JSON, only 1 in UTF-16: a size counted from the text's length misses it
    'a payload over the limit in escapes',
    { ...once, payload: '\u0001'.repeat(10_923) },
    {
      reason: 'payload-too-large',
      field: 'payload',
      message: 'payload is 65540 bytes as JSON; the limit is 65536 bytes',
    },
  ],
  [
    // 25 characters a number, and a comma: numbers at their longest, just over the limit
    'a payload over the limit in long numbers',
    { ...once, payload: Array.from({ length: 2521 }, () => -0.0000012345678901234567) },
    {
      reason: 'payload-too-large',
      field: 'payload',
      message: 'payload is 65547 bytes as JSON; the limit is 65536 bytes',
    },
  ],
  [
    'meta that is an array',
    { ...once, meta: ['a'] },
    { field: 'meta', message: 'meta must be a JSON object, got an array' },
  ],
  ['meta that is a string', { ...once, meta: 'team' }, { field: 'meta', message: /got "team"/ }],
  ['meta that is a Date', { ...once, meta: new Date(0) }, { field: 'meta' }],
  [
    'meta holding a function',
    { ...once, meta: { f: () => 0 } },
    { field: 'meta', message: /meta.f is a function/ },
  ],
  [
    'meta over the limit',
    { ...once, meta: { blob: 'x'.repeat(70_000) } },
    { reason: 'payload-too-large', field: 'meta' },
  ],
  // options
  [
    'awaitTask "yes"',
    { ...base, every: '1m', awaitTask: 'yes' },
    {
      field: 'awaitTask',
      message: 'awaitTask "yes" is not a boolean',
      fix: 'Write awaitTask as true or false.',
    },
  ],
  [
    'awaitTask false on a cron',
    { ...base, cron: '* * * * *', tz: 'UTC', awaitTask: false },
    { field: 'awaitTask', fix: /skipped/ },
  ],
  ['awaitTask false on a one-shot', { ...once, awaitTask: false }, { field: 'awaitTask', fix: /runs once/ }],
  [
    'removeOnComplete 1',
    { ...once, removeOnComplete: 1 },
    { field: 'removeOnComplete', message: /1 is not a boolean/ },
  ],
  [
    'ifExists with a typo',
    { ...once, ifExists: 'replce' },
    {
      field: 'ifExists',
      message: /"replce" is not one of "error", "replace", "keep"/,
      fix: /^Write "replace"/,
    },
  ],
  [
    'ifExists "overwrite"',
    { ...once, ifExists: 'overwrite' },
    { field: 'ifExists', fix: 'Write one of "error", "replace", "keep".' },
  ],
  [
    'delivery "exactly-once"',
    { ...once, delivery: 'exactly-once' },
    { field: 'delivery', message: /"at-least-once", "at-most-once"/ },
  ],
  // unknown fields and non-objects
  [
    'the typo dealy',
    { ...base, dealy: '5m' },
    {
      field: 'dealy',
      message: 'the timer spec has an unknown field "dealy" (set to "5m")',
      fix: /^Did you mean "delay"\?/,
    },
  ],
  ['the typo maxruns', { ...base, every: '1m', maxruns: 3 }, { field: 'maxruns', fix: /"maxRuns"/ }],
  ['the typo handlr', { ...once, handlr: 'x' }, { field: 'handlr', fix: /"handler"/ }],
  [
    'an unknown field like nothing known',
    { ...once, frobnicate: { attempts: 3 } },
    { field: 'frobnicate', fix: /^Remove "frobnicate"; the known fields are key, handler,/ },
  ],
  [
    'a spec that is null',
    null,
    { field: undefined, message: 'the timer spec must be a JSON object, got null' },
  ],
  ['a spec that is an array', [once], { field: undefined, message: /got an array/ }],
  ['a spec that is a string', '{"key":"k"}', { field: undefined, message: /got "\{\\"key/ }],
];

describe('normalizeSpec refuses', () => {
  it.each(refusals)('%s', (_name, spec, expected) => {
    const error = refusalOf(() => normalizeSpec(spec));
    expect(error.reason).toBe(expected.reason ?? 'invalid');
    expect(error.field).toBe(expected.field);
    if (expected.field) expect(error.message).toContain(expected.field);
    if (expected.message instanceof RegExp) expect(error.message).toMatch(expected.message);
    else if (expected.message) expect(error.message).toBe(expected.message);
    expect(error.fix).toMatch(/^[A-Z].{10,}[.]$/s);
    if (expected.fix instanceof RegExp) expect(error.fix).toMatch(expected.fix);
    else if (expected.fix) expect(error.fix).toBe(expected.fix);
  });
});

describe('normalizeSpec on hostile input', () => {
  it('shortens a very long unknown field name in the message', () => {
    const name = 'x'.repeat(10_000);
    const error = refusalOf(() => normalizeSpec({ ...once, [name]: 1 }));
    expect(error).toMatchObject({ reason: 'invalid', field: name });
    expect(error.message).toMatch(/^the timer spec has an unknown field "x{77}\.\.\." \(set to 1\)$/);
  });
});

describe('normalizeSpec limits', () => {
  it('takes the payload limit and the minimum interval from the cluster', () => {
    const limits = { maxPayloadBytes: 10, minEveryMs: 1000 };
    expect(normalizeSpec({ ...once, payload: '12345678' }, limits).payload).toBe('12345678');
    expect(refusalOf(() => normalizeSpec({ ...once, payload: '123456789' }, limits))).toMatchObject({
      reason: 'payload-too-large',
      message: 'payload is 11 bytes as JSON; the limit is 10 bytes',
    });
    expect(normalizeSpec({ ...base, every: '1s' }, limits).everyMs).toBe(1000);
    expect(refusalOf(() => normalizeSpec({ ...base, every: 999 }, limits))).toMatchObject({
      field: 'every',
      fix: 'Write every as at least 1000 (ms), e.g. "1000ms"; the minimum is SUNDIAL_MIN_EVERY_MS.',
    });
  });

  it('accepts a payload of exactly the limit, counted in UTF-8 bytes', () => {
    const payload = 'é'.repeat(32_766) + 'x'.repeat(2); // 65534 bytes + 2 quotes
    expect(normalizeSpec({ ...once, payload }).payload).toBe(payload);
    expect(normalizeSpec({ ...base, every: 100 }).everyMs).toBe(100);
  });

  it('falls back to the defaults for limits given as undefined', () => {
    expect(normalizeSpec({ ...base, every: 100 }, { minEveryMs: undefined }).everyMs).toBe(100);
  });
});

describe('normalizeSpec accepts', () => {
  const defaults = {
    payload: null,
    awaitTask: true,
    removeOnComplete: true,
    ifExists: 'error',
    delivery: 'at-least-once',
  } as const;

  it.each<[string, Record<string, unknown>, NormalizedSpec]>([
    ['a relative one-shot', once, { ...base, ...defaults, kind: 'once', delayMs: 259_200_000 }],
    ['a delay in ms', { ...base, delay: 0 }, { ...base, ...defaults, kind: 'once', delayMs: 0 }],
    [
      'an ISO at with offset',
      { ...base, at: '2026-03-01T09:00:00.250-05:00' },
      { ...base, ...defaults, kind: 'once', atMs: Date.parse('2026-03-01T14:00:00.250Z') },
    ],
    [
      'an ISO at in UTC, without seconds',
      { ...base, at: '2026-03-01T09:00Z' },
      { ...base, ...defaults, kind: 'once', atMs: Date.parse('2026-03-01T09:00:00Z') },
    ],
    [
      'an at in epoch ms',
      { ...base, at: 1_772_355_600_000 },
      { ...base, ...defaults, kind: 'once', atMs: 1_772_355_600_000 },
    ],
    [
      'an interval with every option',
      {
        ...base,
        every: '1.5h',
        maxRuns: 3,
        awaitTask: false,
        removeOnComplete: false,
        payload: { n: [1, 'two', true, null] },
      },
      {
        ...base,
        ...defaults,
        kind: 'interval',
        everyMs: 5_400_000,
        maxRuns: 3,
        awaitTask: false,
        removeOnComplete: false,
        payload: { n: [1, 'two', true, null] },
      },
    ],
    [
      'a cron with tz, meta and explicit choices',
      {
        ...base,
        cron: ' 0 7 * * MON-FRI ',
        tz: 'America/Toronto',
        meta: { team: 'billing' },
        ifExists: 'replace',
        delivery: 'at-most-once',
      },
      {
        ...base,
        ...defaults,
        kind: 'cron',
        cron: '0 7 * * MON-FRI',
        tz: 'America/Toronto',
        meta: { team: 'billing' },
        ifExists: 'replace',
        delivery: 'at-most-once',
      },
    ],
    [
      'null for absent optional fields, as JSON clients send them',
      { ...base, every: 1000, delay: null, cron: null, tz: null, maxRuns: null, meta: null, ifExists: null },
      { ...base, ...defaults, kind: 'interval', everyMs: 1000 },
    ],
    [
      'undefined for absent optional fields, as TypeScript spreads them',
      { ...once, payload: undefined, awaitTask: undefined, delivery: undefined },
      { ...base, ...defaults, kind: 'once', delayMs: 259_200_000 },
    ],
    [
      'awaitTask true on a cron, the default anyway',
      { ...base, cron: '@hourly', tz: 'UTC', awaitTask: true },
      { ...base, ...defaults, kind: 'cron', cron: '@hourly', tz: 'UTC' },
    ],
    [
      'keys and handlers using their whole alphabet',
      { key: 'a-Z_0.9:/@', handler: 'A-z_0.9:', delay: 1 },
      { ...defaults, key: 'a-Z_0.9:/@', handler: 'A-z_0.9:', kind: 'once', delayMs: 1 },
    ],
    [
      'a key of three dots (only "." and ".." are URL dot-segments)',
      { key: '...', handler: 'h', delay: 1 },
      { ...defaults, key: '...', handler: 'h', kind: 'once', delayMs: 1 },
    ],
  ])('%s', (_name, spec, expected) => {
    expect(normalizeSpec(spec)).toStrictEqual(expected);
  });

  it('stores a JSON copy of payload and meta, as every backend will hand them back', () => {
    const payload = { items: [{ id: 1 }], note: undefined };
    const meta = { owner: { team: 'billing' } };
    const normalized = normalizeSpec({ ...once, payload, meta });
    payload.items[0].id = 2;
    meta.owner.team = 'ops';
    expect(normalized.payload).toStrictEqual({ items: [{ id: 1 }] });
    expect(normalized.meta).toStrictEqual({ owner: { team: 'billing' } });
  });

  it('keeps a past at: it is due at once', () => {
    expect(normalizeSpec({ ...base, at: '2001-01-01T00:00:00Z' }).atMs).toBe(
      Date.parse('2001-01-01T00:00:00Z'),
    );
  });

  it('accepts a payload that shares (but does not cycle through) an object', () => {
    const shared = { id: 1 };
    expect(normalizeSpec({ ...once, payload: [shared, shared] }).payload).toStrictEqual([
      { id: 1 },
      { id: 1 },
    ]);
  });

  it("copies a payload exactly as JSON would hand it back: -0 as 0, a '__proto__' member as a member", () => {
    const payload = JSON.parse(
      '{"2":[-1.5e300,"\\ud800"],"__proto__":{"x":1},"a":{"b":null,"c":true}}',
    ) as Record<string, unknown>;
    Object.assign(payload, { z: [-0, { gone: undefined }] });
    const normalized = normalizeSpec({ ...once, payload });
    expect(normalized.payload).toStrictEqual(JSON.parse(JSON.stringify(payload)));
    expect(Object.keys(normalized.payload as object)).toEqual(['2', '__proto__', 'a', 'z']);
    expect(Object.getPrototypeOf(normalized.payload)).toBe(Object.prototype);
    expect(Object.is((normalized.payload as { z: number[] }).z[0], 0)).toBe(true);
    expect((normalized.payload as { a: object }).a).not.toBe(payload.a);
  });
});

describe('validateKey', () => {
  it('returns a valid key and names the given field in refusals', () => {
    expect(validateKey('invoice:42:remind')).toBe('invoice:42:remind');
    expect(validateKey('k'.repeat(256))).toHaveLength(256);
    expect(refusalOf(() => validateKey('a b', 'scope'))).toMatchObject({ reason: 'invalid', field: 'scope' });
  });
});

describe('validateScope', () => {
  it('accepts a key prefix, the empty prefix and no prefix (all keys)', () => {
    expect(validateScope('invoice:')).toBe('invoice:');
    expect(validateScope('')).toBe('');
    expect(validateScope(undefined)).toBe('');
  });

  it.each([['a b'], ['x'.repeat(257)], [5], [null]])('refuses %p', (prefix) => {
    const error = refusalOf(() => validateScope(prefix));
    expect(error).toMatchObject({ reason: 'invalid', field: 'prefix' });
    expect(error.fix).toMatch(/^Write prefix as 0–256 characters/);
  });
});

describe('normalizeWhen', () => {
  it('reads a delay or an at', () => {
    expect(normalizeWhen({ delay: '10m' })).toStrictEqual({ delayMs: 600_000 });
    expect(normalizeWhen({ delay: 0 })).toStrictEqual({ delayMs: 0 });
    expect(normalizeWhen({ at: '2026-03-01T09:00:00+01:00' })).toStrictEqual({
      atMs: Date.parse('2026-03-01T08:00:00Z'),
    });
    expect(normalizeWhen({ at: 5, delay: null })).toStrictEqual({ atMs: 5 });
  });

  it.each<[string, unknown, Expected]>([
    ['neither', {}, { field: 'when', message: 'when has neither delay nor at' }],
    ['both', { delay: 1, at: 2 }, { field: 'at', message: 'when has both delay and at' }],
    ['a negative delay', { delay: -5 }, { field: 'delay', message: 'delay -5 is negative' }],
    ['an at without zone', { at: '2026-03-01T09:00:00' }, { field: 'at', message: /no zone offset/ }],
    ['the typo dealy', { dealy: '5m' }, { field: 'dealy', fix: /^Did you mean "delay"\?/ }],
    [
      'a schedule field of a spec',
      { every: '5m' },
      { field: 'every', fix: /^Remove "every"; the known fields are delay, at\./ },
    ],
    ['not an object', '10m', { field: 'when', message: 'when must be a JSON object, got "10m"' }],
  ])('refuses %s', (_name, when, expected) => {
    const error = refusalOf(() => normalizeWhen(when));
    expect(error).toMatchObject({ reason: 'invalid', field: expected.field });
    if (expected.message instanceof RegExp) expect(error.message).toMatch(expected.message);
    else if (expected.message) expect(error.message).toBe(expected.message);
    if (expected.fix) expect(error.fix).toMatch(expected.fix);
  });

  it('names its own field when given one', () => {
    expect(refusalOf(() => normalizeWhen(null, 'body'))).toMatchObject({ field: 'body' });
  });
});

/** Defect 9 of issue 8: a delay or interval has an upper bound, so every due time is a real date. */
describe('delay and every have an upper bound', () => {
  const CENTURY_MS = 100 * 365.25 * 86_400_000;

  it.each([
    ['delay', 1e20],
    ['delay', Number.MAX_SAFE_INTEGER],
    ['delay', CENTURY_MS + 1],
    ['delay', '36525.5d'],
    ['every', 1e20],
    ['every', '40000d'],
  ])('refuses %s %p as invalid, naming the bound', (field, value) => {
    const refusal = refusalOf(() => normalizeSpec({ ...base, [field]: value }));
    expect(refusal).toMatchObject({ reason: 'invalid', field, fix: expect.stringContaining('100 years') });
  });

  it('refuses a reschedule delay beyond the bound too', () => {
    expect(refusalOf(() => normalizeWhen({ delay: 1e20 }))).toMatchObject({
      reason: 'invalid',
      field: 'delay',
    });
  });

  it('accepts exactly the bound, which keeps the due a valid date', () => {
    expect(normalizeSpec({ ...base, delay: CENTURY_MS }).delayMs).toBe(CENTURY_MS);
    expect(normalizeSpec({ ...base, every: '36525d' }).everyMs).toBe(CENTURY_MS);
    expect(new Date(Date.now() + CENTURY_MS).toISOString()).toMatch(/^21\d\d-/);
  });
});

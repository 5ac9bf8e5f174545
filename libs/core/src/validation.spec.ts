import { validateKey, validateScope } from './names';
import { normalizeSpec, normalizeWhen } from './validation';
import type { NormalizedSpec } from './types';
import { base, type Expected, once, refusalOf } from '../../../test/engine/validation-cases';

// What normalizeSpec refuses: validation-schedule-refusals.spec.ts and validation-field-refusals.spec.ts.

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
      fix: 'Write every as at least 1000 (ms), e.g. "1000ms"; the minimum is set by the limits.minEveryMs option.',
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

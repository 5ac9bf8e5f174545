import fc from 'fast-check';

/*
 * The values test/api/http-fuzz.test.ts builds its calls from: for each field, the values that are
 * taken and every wrong kind we know of, so that most calls differ from a valid one in one place.
 */

/** A body for POST (with key) or PUT (key in the path): a spec, a broken one, or no JSON at all. */
export function specBody(withKey: boolean, maxPayload: number): fc.Arbitrary<string | undefined> {
  // Mostly one schedule field (so the rest of the spec is what is tested), sometimes any mix.
  const schedule = fc.oneof(
    { weight: 3, arbitrary: fc.record({ delay: timeValue() }) },
    { weight: 3, arbitrary: fc.record({ every: timeValue() }) },
    { weight: 2, arbitrary: fc.record({ at: atValue() }) },
    {
      weight: 2,
      arbitrary: fc.record(
        {
          cron: fc.oneof(fc.constantFrom('0 0 1 1 *', '* * * *', '0 0 30 2 *', '61 * * * *', ''), anyValue()),
          tz: fc.oneof(fc.constantFrom('UTC', 'America/Toronto', 'Mars/Base', ''), anyValue()),
        },
        { requiredKeys: ['cron'] },
      ),
    },
    fc.record({ delay: timeValue(), every: timeValue(), at: atValue() }, { requiredKeys: [] }),
  );
  // A spec that would be taken, then up to two fields set to something odd: most calls then
  // differ from a valid one in one place, which is where validation has to hold.
  const field = fc.oneof(
    fc.constantFrom('key', 'handler', 'payload', 'delay', 'every', 'at', 'cron', 'tz', 'maxRuns'),
    fc.constantFrom('awaitTask', 'removeOnComplete', 'meta', 'ifExists', 'delivery', 'unknownField', ''),
  );
  const oddValue = fc.oneof(
    anyValue(),
    timeValue(),
    atValue(),
    fc.constantFrom(
      '0 0 1 1 *',
      '* * * *',
      '0 0 30 2 *',
      'Mars/Base',
      'UTC',
      'keep',
      'replace',
      'at-most-once',
    ),
    fc.constantFrom(1, 0, -1, 1.5, 1e20, { nested: { deep: [1, 2, { x: null }] } }),
  );
  const spec = fc
    .tuple(
      fc.record({ key: keyArb(), handler: fc.constantFrom('log', 'http') }),
      schedule,
      fc.array(fc.tuple(field, oddValue), { maxLength: 2 }),
    )
    .map(([base, when, odd]) => {
      const value: Record<string, unknown> = { ...base, ...when, ...Object.fromEntries(odd) };
      if (!withKey) delete value.key;
      return value;
    });
  return fc.oneof(
    { weight: 8, arbitrary: jsonText(spec) },
    jsonText(anyValue()),
    fc.constantFrom(
      undefined,
      '',
      '{',
      '{"key": NaN}',
      '{"key":"a","handler":"log","delay":Infinity}',
      '{"key":"a","handler":"log","delay":1e999}',
      '{"key":"a","handler":"log","delay":-1e999}',
      '{"key":"a","handler":"log","delay":"3600000","__proto__":{"every":1}}',
      '{"key":"a","handler":"log","constructor":{"prototype":{"x":1}},"delay":"2h"}',
      'null',
      '[]',
      '"string"',
      '\u0000',
      '\uFEFF{"key":"a","handler":"log","delay":"2h"}',
    ),
    fc.nat({ max: 20_000 }).map((depth) => `${'['.repeat(depth)}${']'.repeat(depth)}`),
    fc
      .nat({ max: 20_000 })
      .map(
        (depth) =>
          `{"key":"deep","handler":"log","delay":"2h","payload":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`,
      ),
    fc
      .integer({ min: maxPayload, max: 200_000 })
      .map((size) => JSON.stringify({ key: 'big', handler: 'log', delay: '2h', payload: 'x'.repeat(size) })),
  );
}

/** A delay or every: valid values are an hour or more; the rest is wrong in every way we know. */
export function timeValue(): fc.Arbitrary<unknown> {
  return fc.oneof(
    fc.constantFrom(3_600_000, '1h', '2.5h', '14d', 36_525 * 86_400_000, '36525d'),
    fc.constantFrom(
      0,
      -1,
      99,
      1e20,
      -1e20,
      Number.MAX_VALUE,
      Number.MIN_VALUE,
      1e15,
      '1hr',
      '1e20d',
      '-5s',
      ' 1h',
      'NaN',
      'Infinity',
      '٣h',
      '1ｈ',
    ),
    fc.double({ min: 3_600_000, noNaN: true }),
    anyValue(),
  );
}

export function atValue(): fc.Arbitrary<unknown> {
  return fc.oneof(
    fc.constantFrom(
      '2099-01-01T00:00:00Z',
      4_102_444_800_000,
      '2099-01-01T00:00:00',
      '2099-13-01T00:00:00Z',
      8.64e15 + 1,
      -1,
      '+275760-09-13T00:00:00.001Z',
    ),
    anyValue(),
  );
}

/** The body of a reschedule: { delay } | { at }, or something else. */
export function whenValue(): fc.Arbitrary<unknown> {
  return fc.oneof(
    fc.record({ delay: timeValue() }),
    fc.record({ at: atValue() }),
    fc.record({ delay: timeValue(), at: atValue() }),
    anyValue(),
  );
}

/** The valid keys calls share, so that they meet each other's timers. */
export const KEYS = ['a', 'b', 'fz:1', 'fz:2', 'fz/x@y.z'];

/** A key: a few valid ones timers share, or a malformed one. */
export function keyArb(): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...KEYS) },
    fc.constantFrom('', ' ', 'a b', 'é', '💥', '..', '../..', '%00', 'k'.repeat(257), 'a\nb', '*', '?', '#'),
    fc.string({ unit: 'grapheme', maxLength: 20 }),
  );
}

export function anyValue(): fc.Arbitrary<unknown> {
  return fc.oneof(
    fc.constantFrom(null, true, false, 0, -0, '', 'x'.repeat(300), '\u202e', '😀', { __proto__: null }),
    fc.double(),
    fc.string({ unit: 'grapheme', maxLength: 30 }),
    fc.array(fc.integer(), { maxLength: 5 }),
    fc.dictionary(fc.string({ maxLength: 5 }), fc.integer(), { maxKeys: 3 }),
  );
}

/** JSON.stringify, keeping what JSON cannot say as the literal a careless client would send. */
export function jsonText(value: fc.Arbitrary<unknown>): fc.Arbitrary<string | undefined> {
  return value.map((v) =>
    JSON.stringify(v, (_key, item: unknown) =>
      typeof item === 'number' && !Number.isFinite(item) ? `__${item}__` : item,
    )?.replace(/"__(NaN|Infinity|-Infinity)__"/g, '$1'),
  );
}

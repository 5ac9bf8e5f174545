import { DEFAULT_LIMITS, normalizeSpec } from './validation';
import {
  base,
  type Expected,
  expectSpecRefused,
  once,
  refusalOf,
} from '../../../test/engine/validation-cases';

class Point {
  constructor(readonly x: number) {}
}
const cycle: Record<string, unknown> = { name: 'loop' };
cycle.self = { back: cycle };

/**
 * The rows of docs/spec.md §2's validation table about the rest of a spec: key and handler, payload and
 * meta, the options, unknown fields and specs that are not objects.
 */
const refusals: [string, unknown, Expected][] = [
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
      fix: /or raise the limits\.maxPayloadBytes option\.$/,
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
  it.each(refusals)('%s', (_name, spec, expected) => expectSpecRefused(spec, expected));
});

describe('normalizeSpec on hostile input', () => {
  it('shortens a very long unknown field name in the message', () => {
    const name = 'x'.repeat(10_000);
    const error = refusalOf(() => normalizeSpec({ ...once, [name]: 1 }));
    expect(error).toMatchObject({ reason: 'invalid', field: name });
    expect(error.message).toMatch(/^the timer spec has an unknown field "x{77}\.\.\." \(set to 1\)$/);
  });
});

import { refusals } from './refusals';
import { showValue } from './show-value';

/*
 * The names of Sundial's API (docs/spec.md §2): timer keys, key scopes (a key prefix) and handler names,
 * each a bounded string over a small alphabet; a refusal names the field, what is wrong and the rule.
 */

const KEY_RULE: NameRule = {
  min: 1,
  max: 256,
  disallowed: /[^A-Za-z0-9:_\-./@]/,
  alphabet: 'letters, digits and : _ - . / @',
  example: 'invoice:42:remind',
};
const SCOPE_RULE: NameRule = { ...KEY_RULE, min: 0, example: 'invoice:42:' };
const HANDLER_RULE: NameRule = {
  min: 1,
  max: 128,
  disallowed: /[^A-Za-z0-9:_\-.]/,
  alphabet: 'letters, digits and : _ - .',
  example: 'invoice.remind',
};

/** A timer key: 1–256 characters of `[A-Za-z0-9:_\-./@]`. */
export function validateKey(key: unknown, field = 'key'): string {
  return checkName(key, field, KEY_RULE);
}

/**
 * The key of a timer being created: a key, and not `.` or `..` — as a URL path segment those name the
 * route's parent (browsers, fetch and curl resolve `/v1/timers/..` to `/v1/`, `%2E%2E` too), so the HTTP
 * API, the CLI and the UI could never reach such a timer. Lookups still accept them (validateKey), so a
 * timer created before this rule can be read and cancelled from code.
 */
export function validateNewKey(key: unknown): string {
  const valid = validateKey(key);
  if (valid === '.' || valid === '..') {
    throw refusals.invalid(
      'key',
      `key ${showValue(valid)} is a URL dot-segment: no HTTP route could name the timer`,
      `Use a key with a letter or digit, e.g. ${KEY_RULE.example}.`,
    );
  }
  return valid;
}

/** A scope is a key prefix; `''` (or none) means every key. */
export function validateScope(prefix: unknown): string {
  if (prefix === undefined) return '';
  return checkName(prefix, 'prefix', SCOPE_RULE);
}

/** A handler name (docs/spec.md §2): where it is declared (`@OnTimer`) as where it is used. */
export function validateHandler(handler: unknown): string {
  return checkName(handler, 'handler', HANDLER_RULE);
}

/**
 * The argument of `check(id)` (docs/spec.md §3.6): any string — one that is no id as written answers
 * false — and else `invalid` on `id`, on every backend (Redis answered false for a number).
 */
export function validateIdArgument(id: unknown): string {
  if (typeof id === 'string') return id;
  throw refusals.invalid(
    'id',
    `id ${showValue(id)} is not a timer id`,
    "Pass a Timer's id: the string a write returned.",
  );
}

interface NameRule {
  min: number;
  max: number;
  /** matches the first character that is not allowed */
  disallowed: RegExp;
  alphabet: string;
  example: string;
}

/** Keys, scopes and handler names: a bounded string over a small alphabet. */
function checkName(value: unknown, field: string, rule: NameRule): string {
  // the common case first: no text built for a name that passes
  if (typeof value === 'string' && value.length >= rule.min && value.length <= rule.max) {
    const bad = rule.disallowed.exec(value);
    if (!bad) return value;
    throw refusals.invalid(
      field,
      `${field} ${showValue(value)} contains ${JSON.stringify(bad[0])} at position ${bad.index + 1}`,
      nameFix(field, rule),
    );
  }
  const fix = nameFix(field, rule);
  if (typeof value !== 'string')
    throw refusals.invalid(field, `${field} ${showValue(value)} is not a string`, fix);
  if (value.length < rule.min) throw refusals.invalid(field, `${field} is empty`, fix);
  throw refusals.invalid(field, `${field} ${showValue(value)} is ${value.length} characters long`, fix);
}

function nameFix(field: string, rule: NameRule): string {
  return `Write ${field} as ${rule.min}–${rule.max} characters of ${rule.alphabet}, e.g. "${rule.example}".`;
}

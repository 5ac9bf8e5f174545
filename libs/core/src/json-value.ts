import { SundialError } from './errors';
import type { JsonValue } from './types';

/** Deeper nesting is refused rather than risking a stack overflow in the walk or in JSON itself. */
const MAX_DEPTH = 100;

/** A size bound in UTF-8 bytes, and where it is set (a refusal's fix names it: "raise <setBy>"). */
export interface SizeLimit {
  maxBytes: number;
  setBy: string;
}

/**
 * Checks that `value` survives JSON unchanged and serializes to at most `limit.maxBytes` UTF-8 bytes,
 * and returns its JSON copy, which is what every backend stores and hands back.
 * Object properties holding `undefined` are the one loss accepted: JSON omits them, and so do we.
 */
export function toJsonValue(value: unknown, field: string, limit: SizeLimit): JsonValue {
  const { maxBytes } = limit;
  const size = { bound: 0 };
  const copy = jsonCopy(value, 0, size);
  if (copy === NOT_JSON) {
    // The walk that says what is wrong builds a path per member: only a value that fails the quick one takes it.
    const problem = findProblem(value, field, []) ?? `${field} is nested more than ${MAX_DEPTH} levels deep`;
    throw new SundialError({
      reason: 'invalid',
      field,
      message: `${field} is not JSON: ${problem}`,
      fix:
        `Put only JSON values in ${field}: strings, finite numbers, booleans, null, arrays and plain objects ` +
        '(convert a Date with toISOString(), a BigInt with toString(), a Map with Object.fromEntries()).',
    });
  }
  // Within the bound no text is made (encodeSpecFields makes the row's); a UTF-16 code unit is at most 3
  // UTF-8 bytes, so a short text needs no count either.
  const text = size.bound <= maxBytes ? '' : JSON.stringify(copy);
  const bytes = text.length * 3 <= maxBytes ? 0 : Buffer.byteLength(text, 'utf8');
  if (bytes > maxBytes) {
    throw new SundialError({
      reason: 'payload-too-large',
      field,
      message: `${field} is ${bytes} bytes as JSON; the limit is ${maxBytes} bytes`,
      fix: `Keep ${field} within ${maxBytes} bytes of JSON: store large data elsewhere and pass its id, or raise ${limit.setBy}.`,
    });
  }
  return copy;
}

/** What jsonCopy returns for a value JSON would drop, alter or choke on. */
const NOT_JSON = Symbol('not JSON');

/**
 * `value` as JSON.parse(JSON.stringify(value)) gives it back, made in one walk without the text (a parse
 * was ~40% of normalizeSpec: docs/design.md "Performance"); NOT_JSON when JSON would not keep it — what
 * findProblem finds something in, without building paths (a cycle shows as depth beyond MAX_DEPTH;
 * findProblem then tells the two apart). Object members holding `undefined` are left out, -0 becomes 0.
 * Adds to `size.bound` at least the UTF-8 bytes of its JSON text: a string's code unit is at most 6 (an
 * escape), a number at most 25 characters ('-0.0000012345678901234567'), a literal 5.
 */
function jsonCopy(value: unknown, depth: number, size: { bound: number }): JsonValue | typeof NOT_JSON {
  if (typeof value === 'string') {
    size.bound += 6 * value.length + 2;
    return value;
  }
  if (typeof value === 'number') {
    size.bound += 25;
    return Number.isFinite(value) ? value + 0 : NOT_JSON; // + 0: -0 → 0
  }
  size.bound += 5; // null, true, false; an array's or object's brackets and its commas (1 per item)
  if (value === null || typeof value === 'boolean') return value;
  if (typeof value !== 'object' || depth >= MAX_DEPTH) return NOT_JSON;
  if (Array.isArray(value)) {
    const items: JsonValue[] = [];
    size.bound += value.length;
    for (let i = 0; i < value.length; i++) {
      const item = jsonCopy(value[i], depth + 1, size);
      if (item === NOT_JSON) return NOT_JSON;
      items.push(item);
    }
    return items;
  }
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return NOT_JSON;
  const members: { [name: string]: JsonValue } = {};
  for (const name of Object.keys(value)) {
    const member = (value as Record<string, unknown>)[name];
    if (member === undefined) continue;
    size.bound += 6 * name.length + 4; // "name":,
    const item = jsonCopy(member, depth + 1, size);
    if (item === NOT_JSON) return NOT_JSON;
    // JSON.parse makes `__proto__` an own member; an assignment would set the prototype instead
    if (name === '__proto__')
      Object.defineProperty(members, name, {
        value: item,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    else members[name] = item;
  }
  return members;
}

/** The first part of `value` that JSON would drop, alter or choke on, described at its path; else null. */
function findProblem(value: unknown, path: string, ancestors: object[]): string | null {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return null;
  if (typeof value === 'number') return Number.isFinite(value) ? null : `${path} is ${value}`;
  if (typeof value !== 'object') {
    return `${path} is ${value === undefined ? 'undefined' : `a ${typeof value}`}`;
  }
  if (ancestors.includes(value)) return `${path} refers back to an object that contains it (a cycle)`;
  if (ancestors.length >= MAX_DEPTH) return `${path} is nested more than ${MAX_DEPTH} levels deep`;
  const prototype: unknown = Object.getPrototypeOf(value);
  if (!Array.isArray(value) && prototype !== Object.prototype && prototype !== null) {
    return `${path} is a ${value.constructor?.name ?? 'non-plain'} object, not a plain object`;
  }
  ancestors.push(value);
  try {
    for (const [childPath, child] of children(value, path)) {
      const problem = findProblem(child, childPath, ancestors);
      if (problem) return problem;
    }
    return null;
  } finally {
    ancestors.pop();
  }
}

/** The members JSON would serialize, with their paths; an array hole reads as undefined and is refused. */
function children(value: object, path: string): [string, unknown][] {
  if (Array.isArray(value)) return Array.from(value, (item, index) => [`${path}[${index}]`, item]);
  return Object.entries(value)
    .filter(([, item]) => item !== undefined)
    .map(([name, item]) => [
      /^[A-Za-z_$][\w$]*$/.test(name) ? `${path}.${name}` : `${path}[${JSON.stringify(name)}]`,
      item,
    ]);
}

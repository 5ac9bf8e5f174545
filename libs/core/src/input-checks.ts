import { closestName } from './closest-name';
import { refusals } from './refusals';
import { showValue } from './show-value';
import { unknownFieldFix } from './unknown-field-fix';

/** A JSON object read from outside, before it is checked. */
export type Input = Record<string, unknown>;

// Checks of untyped input (spec fields, `when` objects) shared by validation.ts; each refuses with
// reason 'invalid', the field, and what to write instead.

export function optionalBoolean(value: unknown, field: string, fallback: boolean): boolean {
  if (!isGiven(value)) return fallback;
  if (typeof value !== 'boolean') {
    throw refusals.invalid(
      field,
      `${field} ${showValue(value)} is not a boolean`,
      `Write ${field} as true or false.`,
    );
  }
  return value;
}

export function oneOf<T extends string>(value: unknown, field: string, allowed: readonly T[]): T {
  if (!isGiven(value)) return allowed[0];
  if (!allowed.includes(value as T)) {
    const guess = typeof value === 'string' ? closestName(value, allowed) : null;
    const choices = allowed.map((choice) => `"${choice}"`).join(', ');
    throw refusals.invalid(
      field,
      `${field} ${showValue(value)} is not one of ${choices}`,
      guess ? `Write "${guess}" (one of ${choices}).` : `Write one of ${choices}.`,
    );
  }
  return value as T;
}

/** `field` is undefined for the spec itself, which is not a field of anything. */
export function plainObject(value: unknown, field: string | undefined, example: string): Input {
  const prototype: unknown =
    typeof value === 'object' && value !== null ? Object.getPrototypeOf(value) : undefined;
  if (Array.isArray(value) || (prototype !== Object.prototype && prototype !== null)) {
    const name = field ?? 'the timer spec';
    throw refusals.invalid(
      field,
      `${name} must be a JSON object, got ${showValue(value)}`,
      `Write ${name} as ${example}.`,
    );
  }
  return value as Input;
}

/** A typo such as `dealy` must not pass silently as an ignored field. */
export function rejectUnknownFields(input: Input, known: readonly string[], what: string): void {
  const unknown = firstUnknown(input, known);
  if (unknown === undefined) return;
  throw refusals.invalid(
    unknown,
    `${what} has an unknown field ${showValue(unknown)} (set to ${showValue(input[unknown])})`,
    unknownFieldFix(unknown, known),
  );
}

export function isGiven(value: unknown): boolean {
  return value !== undefined && value !== null;
}

const NONE_GIVEN: readonly never[] = [];

/**
 * The names among `names` whose fields `input` gives, in their order. Checked per spec of a scheduleMany:
 * a loop, and no array when none is given (a closure and an array per call were a visible share of it).
 */
export function givenFields<T extends string>(input: Input, names: readonly T[]): readonly T[] {
  let given: T[] | undefined;
  for (const name of names) if (isGiven(input[name])) (given ??= []).push(name);
  return given ?? NONE_GIVEN;
}

/** Object.keys(input).find(not known), without the array of keys. */
function firstUnknown(input: Input, known: readonly string[]): string | undefined {
  for (const name in input) {
    if (Object.hasOwn(input, name) && !known.includes(name)) return name;
  }
  return undefined;
}

import { closestName } from './closest-name';
import { peerFieldFix } from './peer-field-names';

/** How a surface names a field in a fix: JSON's `"maxRuns"`, the CLI's flag `--max-runs`. */
export interface FieldNames {
  /** what the name is: `field`, `flag` */
  noun: string;
  name(field: string): string;
  /** an example of `inner` set within the object field `within`: `"retry": { "attempts": … }` */
  within(within: string, inner: string): string;
}

const JSON_FIELD_NAMES: FieldNames = {
  noun: 'field',
  name: (field) => `"${field}"`,
  within: (within, inner) => `"${within}": { "${inner}": … }`,
};

/**
 * The fix for a field name that is none of `known` (a typo such as `dealy`): another scheduler's name for
 * one of them (peer-field-names.ts), else the closest spelling, else the known names.
 */
export function unknownFieldFix(
  unknown: string,
  known: readonly string[],
  names: FieldNames = JSON_FIELD_NAMES,
): string {
  const peer = peerFieldFix(unknown, known, names);
  if (peer) return peer;
  const guess = closestName(unknown, known);
  const { noun, name } = names;
  return guess
    ? `Did you mean ${name(guess)}? Rename the ${noun} ${name(unknown)} to ${name(guess)}.`
    : `Remove ${name(unknown)}; the known ${noun}s are ${known.map((field) => (noun === 'field' ? field : name(field))).join(', ')}.`;
}

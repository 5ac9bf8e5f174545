// The modules themselves, not @sundial/core's index: that loads the whole engine at every invocation.
import { SPEC_FIELDS } from '../../../libs/core/src/spec-fields';
import { type FieldNames, unknownFieldFix } from '../../../libs/core/src/unknown-field-fix';
import type { ParsedArgs } from './args';
import { CliError } from './cli-error';
import { flagFields } from './spec-from-args';

/** A spec field as the CLI takes it: `--max-runs`. */
const FLAG_NAMES: FieldNames = {
  noun: 'flag',
  name: (field) => `--${field.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}`,
  within: (within, inner) => `--${within} '{"${inner}": …}'`,
};

/**
 * The scheduler's refusal of an unknown spec field (`maxRun`) that a flag set (`--max-run 3`), in the
 * flags' terms: its fix named the camelCase field, which the command line does not take (docs/spec.md
 * §5.6). A field of `--file`, or a known field's refusal, is left as the API said it. The fix is the
 * scheduler's own rule (`unknownFieldFix`) over the fields this CLI knows.
 */
export function flagFieldRefusal(error: CliError, args: ParsedArgs): CliError {
  const field = /^(?:specs\[\d+\]\.)?(\w+)$/.exec(error.field ?? '')?.[1];
  const flag = field === undefined ? undefined : flagFields(args).get(field);
  if (
    error.reason !== 'invalid' ||
    field === undefined ||
    flag === undefined ||
    SPEC_FIELDS.includes(field)
  ) {
    return error;
  }
  const fields = { ...error.toJSON(), message: `--${flag}: ${error.message}` };
  return new CliError(
    { ...fields, fix: unknownFieldFix(field, SPEC_FIELDS, FLAG_NAMES) },
    error.exitCode,
    error.status,
  );
}

/** `send`, a request of the spec the flags built, its refusal rephrased by flagFieldRefusal. */
export async function namingFlags<T>(args: ParsedArgs, send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (error) {
    throw error instanceof CliError ? flagFieldRefusal(error, args) : error;
  }
}

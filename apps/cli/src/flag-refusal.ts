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
 * A refusal a flag caused, in the flags' terms (docs/spec.md §5.6): a batch's key named twice because
 * `--key` set it on every spec; an unknown spec field (`maxRun`) that a flag set (`--max-run 3`), whose
 * fix named the camelCase field the command line does not take — now the scheduler's own rule
 * (`unknownFieldFix`) over the fields this CLI knows, in flags. A field of `--file`, or a known field's
 * refusal, is left as the API said it.
 */
export function flagFieldRefusal(error: CliError, args: ParsedArgs): CliError {
  // `--file batch.json --key k` set one key on every spec: the batch names it twice because of the flag
  if (error.detail?.code === 'repeated-key' && args.options.has('key')) {
    const fix =
      '--key sets the key of every spec of the batch: leave it out and give each spec of the file its own key.';
    return new CliError({ ...error.toJSON(), fix }, error.exitCode, error.status);
  }
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

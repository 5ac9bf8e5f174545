import { SundialError } from './errors';
import { refusals } from './refusals';
import { showValue } from './show-value';
import type { NormalizedSpec, TimerSpec } from './types';

/**
 * A refusal of one spec of a `scheduleMany` batch names that spec (docs/spec.md §3.1): `field`
 * `specs[3].delay` (`specs[3]` for the spec as a whole), its message prefixed with `specs[3]: `. The
 * engine and RedisTimers both refuse so. A thrown value that is not a refusal passes unchanged.
 */
export function inBatch(error: unknown, index: number): unknown {
  if (!(error instanceof SundialError)) return error;
  return new SundialError({
    reason: error.reason,
    field: error.field === undefined ? `specs[${index}]` : `specs[${index}].${error.field}`,
    message: `specs[${index}]: ${error.message}`,
    fix: error.fix,
    ...(error.detail !== undefined && { detail: error.detail }),
  });
}

/**
 * A batch that names a key a second time with ifExists 'error' is refused at that second spec
 * (`specs[i].key`, `duplicate-key`), before any key is looked up: the batch itself is wrong,
 * whatever Redis or the engine holds. Its message names the earlier spec, not a live timer: none may
 * exist (it said "A live timer already exists", and its fix to cancel that timer led nowhere).
 */
export function refuseRepeatedKeys(specs: readonly NormalizedSpec[]): void {
  const first = new Map<string, number>();
  specs.forEach((spec, index) => {
    const earlier = first.get(spec.key);
    if (spec.ifExists === 'error' && earlier !== undefined) {
      throw inBatch(
        new SundialError({
          reason: 'duplicate-key',
          field: 'key',
          message: `key ${JSON.stringify(spec.key)} is also specs[${earlier}]'s: this batch names it twice.`,
          fix: `Give each spec its own key, or drop one of the two; to have specs[${index}] supersede specs[${earlier}], give it ifExists: 'replace'.`,
          // no live timer is involved: a caller wording its own fix (the CLI) must not offer a cancel
          detail: { code: 'repeated-key' },
        }),
        index,
      );
    }
    if (earlier === undefined) first.set(spec.key, index);
  });
}

/**
 * The refusal of a batch one of whose keys is live: it names the spec that asked for that key with
 * ifExists 'error' (one at most, once `refuseRepeatedKeys` passed).
 */
export function liveKeyInBatch(specs: readonly NormalizedSpec[], key: string): unknown {
  const index = specs.findIndex((spec) => spec.ifExists === 'error' && spec.key === key);
  return inBatch(refusals.duplicateKey(key), index);
}

/**
 * A `scheduleMany` batch checked before anything is looked up or written, on every backend: an array,
 * each spec normalized by `normalize` (a refusal names its spec, `inBatch`), no key named twice with
 * ifExists 'error' (`refuseRepeatedKeys`).
 */
export function normalizeBatch(
  specs: unknown,
  normalize: (spec: TimerSpec) => NormalizedSpec,
): NormalizedSpec[] {
  if (!Array.isArray(specs)) {
    throw refusals.invalid(
      'specs',
      `specs must be an array of timer specs, got ${showValue(specs)}`,
      "Pass an array, e.g. [{ key: 'a', handler: 'h', delay: '1m' }].",
    );
  }
  const normalized = specs.map((spec: TimerSpec, index) => {
    try {
      return normalize(spec);
    } catch (error) {
      throw inBatch(error, index);
    }
  });
  refuseRepeatedKeys(normalized);
  return normalized;
}

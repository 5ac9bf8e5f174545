import { normalizeSpec, SundialError } from '@sundial/core';

// Helpers of the validation specs (libs/core/src/validation*.spec.ts, run-policies.spec.ts).

export const base = { key: 'invoice:42:remind', handler: 'invoice.remind' };
export const once = { ...base, delay: '3d' };

/** The SundialError `run` throws; fails when it throws something else or nothing. */
export function refusalOf(run: () => unknown): SundialError {
  try {
    run();
  } catch (error) {
    if (error instanceof SundialError) return error;
    throw error;
  }
  throw new Error('expected a refusal, but the call succeeded');
}

/** What a refusal must say: its reason (default 'invalid'), the field it names, its message and fix. */
export interface Expected {
  reason?: 'invalid' | 'payload-too-large';
  field: string | undefined;
  message?: string | RegExp;
  fix?: string | RegExp;
}

/** A row of docs/spec.md §2's validation table: normalizeSpec refuses `spec` as `expected` says. */
export function expectSpecRefused(spec: unknown, expected: Expected): void {
  const error = refusalOf(() => normalizeSpec(spec));
  expect(error.reason).toBe(expected.reason ?? 'invalid');
  expect(error.field).toBe(expected.field);
  if (expected.field) expect(error.message).toContain(expected.field);
  if (expected.message instanceof RegExp) expect(error.message).toMatch(expected.message);
  else if (expected.message) expect(error.message).toBe(expected.message);
  expect(error.fix).toMatch(/^[A-Z].{10,}[.]$/s);
  if (expected.fix instanceof RegExp) expect(error.fix).toMatch(expected.fix);
  else if (expected.fix) expect(error.fix).toBe(expected.fix);
}

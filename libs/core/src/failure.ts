import { SundialError } from './errors';

/** What a failed run records as its error (docs/spec.md §2 `last.error`) and its `failed` event carries. */
export interface FailureDescription {
  message: string;
  reason?: string;
}

/**
 * Describes whatever a handler threw or rejected with, and never throws itself: a thrown value is
 * user code, and its getters, `toString` or Proxy traps may throw. Were this to throw, the run would
 * never settle (it would stay `running`, its lease renewed for ever), so each read is guarded.
 */
export function describeFailure(thrown: unknown): FailureDescription {
  const message = guarded(() => messageOf(thrown)) ?? `a thrown ${typeof thrown} that could not be described`;
  const reason = guarded(() => (isObject(thrown) ? (thrown as { reason?: unknown }).reason : undefined));
  return typeof reason === 'string' ? { message, reason } : { message };
}

function messageOf(thrown: unknown): string | undefined {
  if (isObject(thrown)) {
    const message = (thrown as { message?: unknown }).message;
    if (typeof message === 'string') return message;
  }
  const text = String(thrown);
  return typeof text === 'string' ? text : undefined;
}

function isObject(value: unknown): value is object {
  return (typeof value === 'object' && value !== null) || typeof value === 'function';
}

function guarded<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}

/**
 * The stack of what a handler threw, for the `run failed` log line (not stored: the row keeps the
 * message): where in the handler it failed. None for Sundial's own refusals (an unknown handler), whose
 * stack is Sundial's, nor for a value without one; never throws (see describeFailure).
 */
export function failureStack(thrown: unknown): string | undefined {
  const stack = guarded(() =>
    isObject(thrown) && !(thrown instanceof SundialError) ? (thrown as { stack?: unknown }).stack : undefined,
  );
  return typeof stack === 'string' ? stack : undefined;
}

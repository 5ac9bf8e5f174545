import { SundialError } from '../errors';
import type { Entry } from './entry';

/* The engine's refusals (SPEC §2 "Validation and errors"): each with its reason, field, message and fix. */

export function invalid(field: string, message: string, fix: string): SundialError {
  return new SundialError({ reason: 'invalid', field, message, fix });
}

export function duplicateKey(key: string): SundialError {
  return new SundialError({
    reason: 'duplicate-key',
    field: 'key',
    message: `a timer with the key "${key}" already exists`,
    fix: "Use another key, or pass ifExists: 'replace' to supersede it or ifExists: 'keep' to keep it.",
  });
}

export function inactive(entry: Entry, what: string, instead: 'replace' | 'resume' | 'wait'): SundialError {
  const fixes = {
    replace: "Wait for the run to end, or schedule the key again with ifExists: 'replace' to supersede it.",
    resume: 'Resume it first.',
    wait: 'Wait for the run to end; listen for its completed or failed event.',
  };
  return new SundialError({
    reason: 'inactive',
    field: 'key',
    message: `the timer "${entry.key}" cannot be ${what}`,
    fix: fixes[instead],
  });
}

/** Names the spec an error in a batch came from: `specs[3].delay`. */
export function atIndex(error: unknown, index: number): unknown {
  if (!(error instanceof SundialError)) return error;
  const field = error.field === undefined ? `specs[${index}]` : `specs[${index}].${error.field}`;
  return new SundialError({
    reason: error.reason,
    field,
    message: `specs[${index}]: ${error.message}`,
    fix: error.fix,
  });
}

export function notFound(key: string): SundialError {
  return new SundialError({
    reason: 'not-found',
    field: 'key',
    message: `no live timer has the key "${key}"`,
    fix: 'Check the key, or schedule the timer first; a cancelled or finished timer is no longer live.',
  });
}

export function disposed(): SundialError {
  return new SundialError({
    reason: 'disposed',
    message: 'the timer engine was disposed',
    fix: 'Create a new engine with createEngine(); a disposed engine takes no more calls.',
  });
}

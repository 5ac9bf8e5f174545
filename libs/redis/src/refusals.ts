import { SundialError } from '@sundial/core';

/** The store's refusals (SPEC §2): each says what went wrong and what to write instead. */
export const refusals = {
  duplicateKey: (key: string) =>
    new SundialError({
      reason: 'duplicate-key',
      field: 'key',
      message: `A live timer already exists under key ${JSON.stringify(key)}.`,
      fix: "Pass ifExists: 'replace' to supersede it, ifExists: 'keep' to get it back, or cancel it first.",
    }),
  notFound: (key: string) =>
    new SundialError({
      reason: 'not-found',
      field: 'key',
      message: `No live timer under key ${JSON.stringify(key)}.`,
      fix: 'Schedule it first, or check the key (list() shows the live ones).',
    }),
  inactive: (key: string, status: string, operation: string) =>
    new SundialError({
      reason: 'inactive',
      field: 'key',
      message: `Cannot ${operation} timer ${JSON.stringify(key)} while it is ${status}.`,
      fix:
        status === 'running'
          ? "Wait for the run to settle, or schedule with ifExists: 'replace' to supersede the running work."
          : 'Resume it first.',
    }),
  invalid: (field: string, message: string, fix: string) =>
    new SundialError({ reason: 'invalid', field, message, fix }),
  disposed: () =>
    new SundialError({
      reason: 'disposed',
      message: 'This Sundial client was disposed.',
      fix: 'Create a new client; a disposed one takes no more calls.',
    }),
  unavailable: (cause: unknown) =>
    new SundialError({
      reason: 'unavailable',
      message: `Redis is unreachable (${cause instanceof Error ? cause.message : String(cause)}); the call changed nothing.`,
      fix: 'Check that Redis is up and the connection settings (URL, credentials, TLS) are right, then retry.',
    }),
};

import { createHash } from 'node:crypto';
import { refusals } from './refusals';

/** How long a `requestId` is remembered by default (docs/spec.md §5.1, docs/design.md "Repeated calls"). */
export const DEFAULT_REQUEST_WINDOW_MS = 24 * 3_600_000;

const REQUEST_ID = /^[\x21-\x7e]{1,255}$/;

/** A caller's request id: 1 to 255 printable ASCII characters, no spaces (like an Idempotency-Key). */
export function validateRequestId(requestId: unknown, field = 'requestId'): string {
  if (typeof requestId !== 'string' || !REQUEST_ID.test(requestId)) {
    throw refusals.invalid(
      field,
      `${field} must be 1 to 255 printable ASCII characters without spaces.`,
      `Pass e.g. a UUID: ${field}: crypto.randomUUID().`,
    );
  }
  return requestId;
}

/**
 * What a request asked for, to tell a true retry from another request under the same id. Objects are
 * read with their keys sorted: a retry that sends the same fields in another order (another client
 * library, a JSON body rebuilt from a map) is the same request.
 */
export function requestFingerprint(operation: string, args: unknown[]): string {
  return digest(JSON.stringify([operation, ...args], sortedKeys));
}

/**
 * Whether `stored`, the fingerprint a request id was first used with, names the request `fingerprint`
 * names: the same, or what the releases before sorted keys made of the same arguments. Redis keeps a
 * fingerprint for the request window (24 h), so a retry sent across an upgrade must not be refused as
 * another request.
 */
export function sameRequest(
  stored: string,
  fingerprint: string,
  operation: string,
  args: unknown[],
): boolean {
  return stored === fingerprint || stored === digest(JSON.stringify([operation, ...args]));
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('base64url').slice(0, 22);
}

function sortedKeys(_key: string, value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );
}

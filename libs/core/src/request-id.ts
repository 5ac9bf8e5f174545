import { createHash } from 'node:crypto';
import { isSundialError } from './errors';
import { toJsonValue } from './json-value';
import { refusals } from './refusals';
import type { WriteOptions } from './write-options';

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

/** An id a write pins to what it stands for (docs/design.md "Repeated calls"), and the option it came as. */
export interface RequestPin {
  id: string;
  field: 'requestId' | 'partOf.requestId';
  fingerprint: string;
  /** what `fingerprint` was made of, for `sameRequest` */
  operation: string;
  args: unknown[];
}

/**
 * The ids a write with `options` pins, checked (docs/spec.md §5.1): its `partOf` request's first, then
 * its own `requestId`'s (`operation` and `args`). A `partOf` request's fingerprint is made under an
 * operation no call has, so its id is no call's `requestId`.
 */
export function requestPins(operation: string, args: unknown[], options: WriteOptions): RequestPin[] {
  const pins: RequestPin[] = [];
  const { partOf, requestId } = options;
  if (partOf !== undefined) {
    if (partOf === null || typeof partOf !== 'object') {
      throw refusals.invalid(
        'partOf',
        'partOf must be an object: { requestId, operation, args }.',
        'Pass the whole request the call is one step of, or leave partOf out.',
      );
    }
    const id = validateRequestId(partOf.requestId, 'partOf.requestId');
    if (typeof partOf.operation !== 'string' || partOf.operation === '') {
      throw refusals.invalid(
        'partOf.operation',
        'partOf.operation must be a non-empty string.',
        'Name the request, e.g. "PUT /v1/timers/:key".',
      );
    }
    if (!Array.isArray(partOf.args)) {
      throw refusals.invalid(
        'partOf.args',
        'partOf.args must be an array.',
        'Pass what the request asked for, e.g. [key, body].',
      );
    }
    const whole: [string, unknown[]] = [partOf.operation, partOf.args];
    pins.push({
      id,
      field: 'partOf.requestId',
      fingerprint: wholeFingerprint(whole),
      operation: PART_OF,
      args: whole,
    });
  }
  if (requestId !== undefined) {
    const id = validateRequestId(requestId);
    pins.push({ id, field: 'requestId', fingerprint: requestFingerprint(operation, args), operation, args });
  }
  return pins;
}

/** the operation a `partOf` request's fingerprint is made under: no call's */
const PART_OF = 'partOf';

/**
 * The fingerprint of a `partOf` request, or `invalid` on `partOf.args` when JSON cannot write them (a
 * cycle, a BigInt, a `toJSON` that throws: a bare TypeError before), saying where, before any pin is made.
 */
function wholeFingerprint(whole: [string, unknown[]]): string {
  try {
    return requestFingerprint(PART_OF, whole);
  } catch (error) {
    // the walk that says where JSON fails (a cycle at partOf.args[0].self); what JSON said, else
    toJsonValue(whole[1], 'partOf.args', { maxBytes: Infinity, setBy: 'partOf.args' });
    throw refusals.invalid(
      'partOf.args',
      `partOf.args is not JSON: ${(error as Error)?.message ?? String(error)}`,
      'Pass what the request asked for as JSON values, e.g. [key, body] as they came.',
    );
  }
}

/**
 * The id of the step a `partOf` request's pin is held for when `operation`, one step of that request, ends
 * with `error` (docs/design.md "Repeated calls" PUT): a `schedule` naming its next step (`unlessAnswered`)
 * and refused `duplicate-key` keeps the request's pin it made, for that step, which takes it as its own
 * (let go if that step is refused or changes nothing too). Else undefined: the pin goes with the call.
 * So between PUT's create and its replace the Idempotency-Key is never free for another request.
 */
export function heldForNextStep(
  operation: string,
  options: WriteOptions,
  error: unknown,
): string | undefined {
  if (operation !== 'schedule' || options.partOf === undefined) return undefined;
  if (!isSundialError(error) || error.reason !== 'duplicate-key') return undefined;
  return options.unlessAnswered;
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

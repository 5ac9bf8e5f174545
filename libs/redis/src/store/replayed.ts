import { noteRequestCall } from '@sundial/core';
import type { CallRequests } from './requests';

/**
 * A client write's reply, and whether it was its first answer given again (docs/design.md "Repeated
 * calls"): includes/requests.lua answers a request it kept `['again', <the first answer>]`, the one way
 * a replay is told apart.
 */
export interface Replayed<T> {
  reply: T;
  /**
   * the first call of the caller's request (its `requestId`) did this, and counted, published and
   * recorded it then: a retry or a concurrent twin adds nothing. A call with a fresh id is repeated only
   * by ioredis's resend after its reply was lost (nobody heard it): `false` whatever the mark.
   */
  again: boolean;
}

export function replayOf<T>(raw: unknown, requests: Pick<CallRequests, 'named'>): Replayed<T> {
  const again = Array.isArray(raw) && raw[0] === 'again';
  // a call under the caller's request id, for the HTTP API's Idempotent-Replayed (watchReplay)
  if (requests.named) noteRequestCall(again);
  if (again) return { reply: (raw as unknown[])[1] as T, again: requests.named };
  return { reply: raw as T, again: false };
}

import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { ApiHeader } from '@nestjs/swagger';
import {
  refusals,
  requestFingerprint,
  type TimerSpec,
  validateRequestId,
  type WriteOptions,
} from '@sundial/core';
import type { IncomingMessage } from 'node:http';

const HEADER = 'Idempotency-Key';

/**
 * Documents the `Idempotency-Key` header on a state-changing route (docs/spec.md §5.2, docs/design.md
 * "Repeated calls"): a retry with the same key and body within 24 h answers as the first request did.
 */
export const Idempotent = (): MethodDecorator =>
  ApiHeader({
    name: HEADER,
    required: false,
    description:
      'Makes a retry safe: the same key with the same request within 24 h returns the first answer and ' +
      'changes nothing more; with another request it is refused 422 idempotency-conflict. 1 to 255 ' +
      'printable ASCII characters, e.g. a UUID.',
  });

/**
 * The route's `Idempotency-Key` header, as it came (undefined when absent). Sent more than once, it is
 * refused rather than read as the one text Node joins them into (`a, b`, "without spaces" refused).
 */
export const IdempotencyKey = createParamDecorator((_data: unknown, context: ExecutionContext) => {
  const sent = context.switchToHttp().getRequest<IncomingMessage>().headersDistinct[HEADER.toLowerCase()];
  if (sent && sent.length > 1) {
    throw refusals.invalid(
      HEADER,
      `${HEADER} was sent ${sent.length} times; a request has one.`,
      `Send one ${HEADER} header, the same on every retry of the request.`,
    );
  }
  return sent?.[0];
});

/** The WriteOptions of a route's call from its `Idempotency-Key`: the key is the call's `requestId`. */
export function writeOptions(idempotencyKey: string | undefined): WriteOptions | undefined {
  if (idempotencyKey === undefined) return undefined;
  return { requestId: validateRequestId(idempotencyKey, HEADER) };
}

/**
 * PUT's two calls (a create, then on `duplicate-key` a replace; docs/design.md "Repeated calls" PUT), each
 * under its own request id derived from the key — those of every release, so a retry across an upgrade
 * meets the first try's answers — and both `partOf` the one request the key names, `PUT` of `spec` (its
 * key the path's, and `ifExists: 'replace'` whether the body says so or not, as each call's own
 * fingerprint has its `ifExists`): the key used for another request (POST, DELETE, another PUT, …) is
 * refused `idempotency-conflict` either way round. The create names the replace (`unlessAnswered`).
 */
export function putWriteOptions(
  idempotencyKey: string | undefined,
  spec: TimerSpec,
): { create?: WriteOptions; replace?: WriteOptions } {
  if (idempotencyKey === undefined) return {};
  const requestId = validateRequestId(idempotencyKey, HEADER);
  const args = [{ ...spec, ifExists: 'replace' }];
  const partOf = { requestId, operation: 'PUT /v1/timers/:key', args };
  const step = (name: string) => `${name}:${requestFingerprint(HEADER, [requestId])}`;
  return {
    create: { requestId: step('create'), unlessAnswered: step('replace'), partOf },
    replace: { requestId: step('replace'), partOf },
  };
}

/**
 * An `idempotency-conflict` in the caller's terms: the TimersApi names its `requestId` or `partOf` (and
 * for PUT a request id derived from the header, which the caller never saw); over HTTP it is the header.
 */
export function idempotencyConflict(idempotencyKey: unknown): {
  field: string;
  message: string;
  fix: string;
} {
  return {
    field: HEADER,
    message: `${HEADER} ${JSON.stringify(idempotencyKey)} was already used for another request (another route, timer, query or body).`,
    fix: `Retry with exactly the same request, or send a new ${HEADER} for a new request.`,
  };
}

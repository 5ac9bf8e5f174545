import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { ApiHeader } from '@nestjs/swagger';
import { refusals, requestFingerprint, validateRequestId, type WriteOptions } from '@sundial/core';
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

/**
 * The WriteOptions of a call from the route's `Idempotency-Key`. `step` names one of several calls a
 * route makes (PUT: create, then replace), each under its own request id derived from the key.
 */
export function writeOptions(idempotencyKey: string | undefined, step?: string): WriteOptions | undefined {
  if (idempotencyKey === undefined) return undefined;
  const requestId = validateRequestId(idempotencyKey, HEADER);
  return { requestId: step === undefined ? requestId : `${step}:${requestFingerprint(HEADER, [requestId])}` };
}

/**
 * An `idempotency-conflict` in the caller's terms: the TimersApi names its `requestId` (and for PUT a
 * request id derived from the header, which the caller never saw); over HTTP it is the header.
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

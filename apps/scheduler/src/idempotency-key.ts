import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { ApiHeader } from '@nestjs/swagger';
import type { OpenAPIObject } from '@nestjs/swagger';
import type { HeaderObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import {
  refusals,
  requestFingerprint,
  type TimerSpec,
  validateRequestId,
  watchReplay,
  type WriteOptions,
} from '@sundial/core';
import type { IncomingMessage } from 'node:http';

const HEADER = 'Idempotency-Key';
/** On an answer that is its Idempotency-Key's first answer given again: `true` (docs/spec.md §5.2). */
export const REPLAYED_HEADER = 'Idempotent-Replayed';

/** The part of Express's response a write's route sets: a header. */
export interface HeaderSetter {
  setHeader(name: string, value: string): unknown;
}

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

/**
 * A route's write, its answer marked `Idempotent-Replayed: true` when it is the first answer of its
 * `Idempotency-Key` given again (watchReplay): a retry that changed nothing, told apart from a first
 * call whose answer reads the same (a batch's timers, a cancel's count, a trigger's timer).
 */
export async function answerWrite<T>(
  response: HeaderSetter,
  idempotencyKey: string | undefined,
  write: () => Promise<T>,
): Promise<T> {
  if (idempotencyKey === undefined) return write();
  const { result, replayed } = await watchReplay(write);
  if (replayed) response.setHeader(REPLAYED_HEADER, 'true');
  return result;
}

const REPLAYED_HEADER_DOC: HeaderObject = {
  description:
    'true when this answer is the first answer of its Idempotency-Key given again: a retry, which changed nothing. Absent on an answer the request made now.',
  required: false,
  schema: { type: 'string', enum: ['true'] },
};

/** The document with `Idempotent-Replayed` on the successes of every operation that takes `Idempotency-Key`. */
export function withReplayedHeader(document: OpenAPIObject): OpenAPIObject {
  for (const operations of Object.values(document.paths)) {
    for (const operation of Object.values(operations as Record<string, unknown>)) {
      const { parameters, responses } = operation as {
        parameters?: { in?: string; name?: string }[];
        responses?: Record<string, { headers?: object }>;
      };
      if (!parameters?.some((p) => p.in === 'header' && p.name === HEADER)) continue;
      for (const [status, response] of Object.entries(responses ?? {})) {
        if (status.startsWith('2'))
          response.headers = { ...response.headers, [REPLAYED_HEADER]: REPLAYED_HEADER_DOC };
      }
    }
  }
  return document;
}

import { applyDecorators } from '@nestjs/common';
import { ApiResponse } from '@nestjs/swagger';
import type { OpenAPIObject } from '@nestjs/swagger';
import type {
  HeadersObject,
  ReferenceObject,
  SchemaObject,
} from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { NORMALIZED_SPEC_SCHEMA } from './openapi-explain-schemas';
import { TIMER_SCHEMA } from './openapi-schemas';

/**
 * The answers of docs/spec.md §5.2 beyond each route's success, in /docs-json: a generated client
 * (openapi-generator, orval, openapi-typescript) types only the statuses and bodies the document
 * lists, so every refusal a route can give is listed with the error shape it has.
 */
export const ERROR_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['reason', 'message', 'fix'],
      properties: {
        reason: {
          type: 'string',
          // SundialErrorReason (libs/core/src/errors.ts), and `internal` for an unexpected 500
          enum: [
            'invalid',
            'payload-too-large',
            'duplicate-key',
            'not-found',
            'inactive',
            'disposed',
            'unauthorized',
            'forbidden',
            'unavailable',
            'idempotency-conflict',
            'unknown-handler',
            'forbidden-target',
            'lost',
            'internal',
          ],
        },
        field: {
          type: 'string',
          description: 'the input at fault: a spec field, a query parameter, a header',
        },
        message: { type: 'string' },
        fix: { type: 'string', description: 'what to do instead' },
        detail: {
          type: 'object',
          description: 'on the refusals that name one (SundialErrorDetail)',
          properties: {
            status: {
              type: 'string',
              enum: ['running', 'paused', 'completed', 'failed'],
              description:
                'inactive: the timer state; not-found from pause, resume, trigger, reschedule, backfill: the status a kept timer ended with',
            },
            code: {
              type: 'string',
              enum: [
                'outcome-unknown',
                'one-shot',
                'due-before-status',
                'no-history',
                'cursor-other-list',
                'repeated-key',
              ],
            },
          },
        },
      },
    },
  },
};

/** Shared and named shapes as components: a generator makes one type of each (`Timer`, `NormalizedSpec`, `Error`). */
const COMPONENTS: Record<string, SchemaObject> = {
  Timer: TIMER_SCHEMA,
  NormalizedSpec: NORMALIZED_SPEC_SCHEMA,
  Error: ERROR_SCHEMA,
};

const ERROR_REF = { $ref: '#/components/schemas/Error' };

/** The document with the components the routes' `$ref`s name. */
export function withComponents(document: OpenAPIObject): OpenAPIObject {
  const components = document.components ?? {};
  return { ...document, components: { ...components, schemas: { ...components.schemas, ...COMPONENTS } } };
}

const REFUSALS: Record<number, string> = {
  400: 'invalid: a spec, query parameter, header, key or body the route does not take',
  401: 'unauthorized: SUNDIAL_API_TOKEN is set and the request lacks Authorization: Bearer <token>',
  403: 'forbidden: a Host the scheduler does not answer to, or a write sent for another site’s page',
  404: 'not-found: no live timer under the key (one that ended, kept by removeOnComplete: false, too: detail.status)',
  413: 'payload-too-large: the payload or the body is over SUNDIAL_MAX_PAYLOAD_BYTES',
  415: 'invalid: a body charset other than UTF-8, or a Content-Encoding other than gzip, deflate, br, zstd',
  422: 'idempotency-conflict: the Idempotency-Key was used for another request',
  503: 'unavailable: Redis did not answer (detail.code outcome-unknown: a write that may have been applied)',
};

/**
 * Refusals whose meaning depends on the route (docs/spec.md §2, §3.4): a GET answers a timer that ended
 * and was kept where a write on a live timer refuses it; pause and reschedule answer a paused timer
 * where trigger and backfill refuse it.
 */
export const ROUTE_REFUSALS = {
  duplicateKey: [409, 'duplicate-key: a live timer under the key (ifExists error, the default)'],
  inactiveRunning: [409, 'inactive: the timer is running (detail.status); a paused timer is answered'],
  inactiveRunningOrPaused: [409, 'inactive: the timer is running or paused (detail.status)'],
  endedAnswered: [
    404,
    'not-found: no timer under the key (one that ended, kept by removeOnComplete: false, is answered)',
  ],
  endedRemoved: [
    404,
    'not-found: no timer under the key (the row of one that ended, kept by removeOnComplete: false, is removed: 200)',
  ],
  noLedger: [404, 'not-found: no timer, tombstone or ledger under the key'],
} as const satisfies Record<string, readonly [number, string]>;

/** One refusal with the error shape, described as this route gives it (ROUTE_REFUSALS). */
export function ApiRefusal([status, description]: readonly [number, string]): MethodDecorator {
  return ApiResponse({ status, description, schema: ERROR_REF });
}

/** The refusals of docs/spec.md §5.2 each `/v1` route may give: on the controller. */
export const V1_REFUSALS = [400, 401, 403, 503] as const;

/** Lists these statuses with the error shape (on a route, or on a controller for all its routes). */
export function ApiRefusals(...statuses: readonly number[]): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ...statuses.map((status) => ApiResponse({ status, description: REFUSALS[status], schema: ERROR_REF })),
  );
}

/** A 201's `Location`: where the timer created is read (docs/spec.md §5.2). */
export const CREATED_HEADERS: HeadersObject = {
  Location: {
    description: 'the created timer: /v1/timers/<key, percent-encoded>',
    required: true,
    schema: { type: 'string', example: '/v1/timers/invoice%3A42' },
  },
};

/** A success with its body schema (a description is what OpenAPI requires of every response). */
export function ApiAnswer(
  status: number,
  schema: SchemaObject | ReferenceObject,
  headers?: HeadersObject,
): MethodDecorator {
  return ApiResponse({ status, description: status === 201 ? 'created' : 'ok', schema, headers });
}

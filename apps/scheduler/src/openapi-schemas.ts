import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';

/** OpenAPI shapes of docs/spec.md §2, written once here so /docs matches the contract. */
const DURATION_OR_MS: SchemaObject = {
  oneOf: [
    { type: 'number', description: 'milliseconds' },
    { type: 'string', example: '90s' },
  ],
};

/** docs/spec.md §3.3a–b: the same shape in a spec and in a Timer (whose delays are ms). */
const RUN_POLICY_SCHEMAS: Record<string, SchemaObject> = {
  overlap: { type: 'string', enum: ['skip', 'buffer-one', 'allow', 'cancel-other'], default: 'skip' },
  retry: {
    type: 'object',
    required: ['attempts'],
    properties: {
      attempts: {
        type: 'integer',
        minimum: 1,
        maximum: 100,
        description: 'tries in all, the first one included',
      },
      backoff: {
        type: 'object',
        properties: {
          type: { type: 'string', enum: ['fixed', 'exponential'], default: 'fixed' },
          delay: DURATION_OR_MS,
          maxDelay: DURATION_OR_MS,
        },
      },
    },
  },
  pauseAfterFailures: { type: 'integer', minimum: 1 },
};

/** `meta`: any JSON object, said so, for a generator types it as a map rather than an empty object. */
const FREE_OBJECT: SchemaObject = { type: 'object', additionalProperties: true };

/** An instant: epoch ms or ISO-8601 with offset (at, startAt, endAt, a backfill's from and to). */
const INSTANT: SchemaObject = {
  oneOf: [
    { type: 'number', description: 'epoch ms' },
    { type: 'string', format: 'date-time' },
  ],
};

/** docs/spec.md §3.3c, periodic timers only; a Timer returns the durations and instants in ms. */
const SLOT_POLICY_PROPERTIES: Record<string, SchemaObject> = {
  catchup: { type: 'string', enum: ['skip', 'once', 'all'], default: 'once' },
  catchupWindow: DURATION_OR_MS,
  jitter: DURATION_OR_MS,
  startAt: INSTANT,
  endAt: INSTANT,
};

/** A route's body schema with `examples[0]` as its example: what Swagger UI's "Try it out" sends. */
export function withExample(schema: SchemaObject, examples: readonly object[]): SchemaObject {
  return { ...schema, example: examples[0] };
}

export const TIMER_SPEC_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['handler'],
  description: 'Exactly one of delay, at, every, cron (cron needs tz). PUT takes the key from the path.',
  properties: {
    key: { type: 'string', pattern: '^[A-Za-z0-9:_\\-./@]{1,256}$', example: 'invoice:42:remind' },
    handler: { type: 'string', example: 'http' },
    payload: { description: 'any JSON value, at most SUNDIAL_MAX_PAYLOAD_BYTES serialized' },
    delay: DURATION_OR_MS,
    at: {
      oneOf: [
        { type: 'number', description: 'epoch ms' },
        { type: 'string', format: 'date-time' },
      ],
    },
    every: DURATION_OR_MS,
    cron: { type: 'string', example: '0 7 * * MON-FRI' },
    tz: { type: 'string', example: 'America/Toronto' },
    maxRuns: { type: 'integer', minimum: 1 },
    awaitTask: { type: 'boolean', default: true },
    removeOnComplete: { type: 'boolean', default: true },
    meta: FREE_OBJECT,
    ifExists: { type: 'string', enum: ['error', 'replace', 'keep'], default: 'error' },
    delivery: { type: 'string', enum: ['at-least-once', 'at-most-once'], default: 'at-least-once' },
    ...RUN_POLICY_SCHEMAS,
    timeout: { ...DURATION_OR_MS, description: 'how long one run may take (1 ms to 365 days); default none' },
    ...SLOT_POLICY_PROPERTIES,
  },
};

export const BACKFILL_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['from', 'to'],
  description: 'a past range: the slots in [from, to] run now, in order (at most 1000)',
  properties: { from: INSTANT, to: INSTANT },
};

export const BACKFILL_RESULT_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['key', 'slots'],
  properties: { key: { type: 'string' }, slots: { type: 'integer' } },
};

export const RESCHEDULE_SCHEMA: SchemaObject = {
  type: 'object',
  description: 'exactly one of delay or at',
  properties: { delay: DURATION_OR_MS, at: TIMER_SPEC_SCHEMA.properties?.at ?? {} },
};

const EPOCH_OR_NULL: SchemaObject = { type: 'number', nullable: true };

/** A Timer's retry: its defaults applied and its delays in ms (RetryPolicy). */
const RETRY_POLICY_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['attempts', 'backoff'],
  properties: {
    attempts: { type: 'integer' },
    backoff: {
      type: 'object',
      required: ['type', 'delay'],
      properties: {
        type: { type: 'string', enum: ['fixed', 'exponential'] },
        delay: { type: 'number' },
        maxDelay: { type: 'number' },
      },
    },
  },
};

/** docs/spec.md §2 `Timer`: the fields every timer has are required; the others are absent when not given. */
export const TIMER_SCHEMA: SchemaObject = {
  type: 'object',
  required: [
    'id',
    'key',
    'version',
    'kind',
    'status',
    'handler',
    'payload',
    'scheduledAt',
    'dueAt',
    'runCount',
    'awaitTask',
    'removeOnComplete',
    'delivery',
    'lastFiredAt',
    'lastCompletedAt',
    'lastErrorAt',
    'last',
  ],
  properties: {
    id: { type: 'string' },
    key: { type: 'string' },
    version: { type: 'integer' },
    kind: { type: 'string', enum: ['once', 'interval', 'cron'] },
    status: { type: 'string', enum: ['pending', 'running', 'paused', 'completed', 'failed', 'cancelled'] },
    handler: { type: 'string' },
    payload: {},
    scheduledAt: { type: 'number' },
    dueAt: { type: 'number' },
    delayMs: { type: 'number' },
    everyMs: { type: 'number' },
    cron: { type: 'string' },
    tz: { type: 'string' },
    maxRuns: { type: 'integer' },
    runCount: { type: 'integer' },
    awaitTask: { type: 'boolean' },
    removeOnComplete: { type: 'boolean' },
    delivery: { type: 'string', enum: ['at-least-once', 'at-most-once'] },
    lastFiredAt: EPOCH_OR_NULL,
    lastCompletedAt: EPOCH_OR_NULL,
    lastErrorAt: EPOCH_OR_NULL,
    last: {
      type: 'object',
      nullable: true,
      required: ['started', 'status'],
      properties: {
        started: { type: 'number' },
        ended: { type: 'number' },
        status: { type: 'string', enum: ['running', 'ok', 'failed'] },
        error: {
          type: 'object',
          required: ['message'],
          properties: { message: { type: 'string' }, reason: { type: 'string' } },
        },
      },
    },
    meta: FREE_OBJECT,
    overlap: RUN_POLICY_SCHEMAS.overlap,
    retry: RETRY_POLICY_SCHEMA,
    pauseAfterFailures: RUN_POLICY_SCHEMAS.pauseAfterFailures,
    timeout: { type: 'number', description: 'ms, when the timer has one' },
    catchup: { type: 'string', enum: ['skip', 'all'], description: "absent: 'once', the default" },
    catchupWindow: { type: 'number' },
    jitter: { type: 'number' },
    startAt: { type: 'number' },
    endAt: { type: 'number' },
  },
};

/** Where a route's answer is a Timer: the `Timer` component (openapi-responses.ts adds it). */
export const TIMER_REF = { $ref: '#/components/schemas/Timer' };

/** `list`'s status filter: a Timer's status (dueBefore takes pending only). */
export const LIST_STATUS_SCHEMA: SchemaObject = {
  type: 'string',
  enum: ['pending', 'running', 'paused', 'completed', 'failed', 'cancelled'],
};

/** POST /v1/timers takes one spec, or a JSON array of them (a batch: scheduleMany, all or none). */
export const SPEC_OR_BATCH_SCHEMA: SchemaObject = {
  oneOf: [
    TIMER_SPEC_SCHEMA,
    {
      type: 'array',
      items: TIMER_SPEC_SCHEMA,
      description:
        'A batch: every spec and every ifExists error key checked before anything is written; a refusal names its spec (field specs[i].<field>). The whole body is held to the one body limit.',
    },
  ],
};

/** What POST /v1/timers answers a batch: its timers in the body's order. */
export const BATCH_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['items'],
  properties: {
    items: {
      type: 'array',
      items: TIMER_REF,
      description:
        "in the body's order, each timer as the batch left it: one a later spec replaced (its key named again with ifExists replace) is cancelled, its version one past",
    },
  },
};

export const LIST_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['items', 'nextCursor'],
  properties: {
    items: { type: 'array', items: TIMER_REF },
    nextCursor: { type: 'string', nullable: true, description: 'null on the last page' },
  },
};

/** DELETE /v1/timers/:key: a live timer cancelled, or the kept row of one that ended removed (§3.4). */
export const CANCELLED_SCHEMA: SchemaObject = {
  oneOf: [
    {
      type: 'object',
      required: ['cancelled'],
      properties: { cancelled: { type: 'boolean', enum: [true] } },
    },
    {
      type: 'object',
      required: ['cancelled', 'removed'],
      description: 'a timer that had ended, kept by removeOnComplete: false: its row removed',
      properties: {
        cancelled: { type: 'boolean', enum: [false] },
        removed: { type: 'string', enum: ['completed', 'failed'], description: 'the status it ended with' },
      },
    },
  ],
};

export const CANCELLED_COUNT_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['cancelled'],
  properties: { cancelled: { type: 'integer', description: 'how many timers were cancelled' } },
};

export const REGISTRY_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['ids'],
  properties: { ids: { type: 'array', items: { type: 'string', example: '12p0' } } },
};

export const REGISTRY_CHECK_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['id', 'live'],
  properties: { id: { type: 'string' }, live: { type: 'boolean' } },
};

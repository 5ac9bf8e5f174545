import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';

/** OpenAPI shapes of docs/spec.md §2, written once here so /docs matches the contract. */
const DURATION_OR_MS: SchemaObject = {
  oneOf: [
    { type: 'number', description: 'milliseconds' },
    { type: 'string', example: '90s' },
  ],
};

/** An instant: epoch ms or ISO-8601 with offset (at, startAt, endAt, a backfill's from and to). */
const INSTANT: SchemaObject = {
  oneOf: [
    { type: 'number', description: 'epoch ms' },
    { type: 'string', format: 'date-time' },
  ],
};

/** docs/spec.md §3.3a, periodic timers only; a Timer returns the durations and instants in ms. */
const SLOT_POLICY_PROPERTIES: Record<string, SchemaObject> = {
  catchup: { type: 'string', enum: ['skip', 'once', 'all'], default: 'once' },
  catchupWindow: DURATION_OR_MS,
  jitter: DURATION_OR_MS,
  startAt: INSTANT,
  endAt: INSTANT,
};

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
    meta: { type: 'object' },
    ifExists: { type: 'string', enum: ['error', 'replace', 'keep'], default: 'error' },
    delivery: { type: 'string', enum: ['at-least-once', 'at-most-once'], default: 'at-least-once' },
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
  properties: { key: { type: 'string' }, slots: { type: 'integer' } },
};

export const RESCHEDULE_SCHEMA: SchemaObject = {
  type: 'object',
  description: 'exactly one of delay or at',
  properties: { delay: DURATION_OR_MS, at: TIMER_SPEC_SCHEMA.properties?.at ?? {} },
};

const EPOCH_OR_NULL: SchemaObject = { type: 'number', nullable: true };

export const TIMER_SCHEMA: SchemaObject = {
  type: 'object',
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
      properties: {
        started: { type: 'number' },
        ended: { type: 'number' },
        status: { type: 'string', enum: ['running', 'ok', 'failed'] },
        error: { type: 'object', properties: { message: { type: 'string' }, reason: { type: 'string' } } },
      },
    },
    meta: { type: 'object' },
    catchup: { type: 'string', enum: ['skip', 'all'] },
    catchupWindow: { type: 'number' },
    jitter: { type: 'number' },
    startAt: { type: 'number' },
    endAt: { type: 'number' },
  },
};

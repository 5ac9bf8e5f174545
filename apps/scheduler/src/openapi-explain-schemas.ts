import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { TIMER_LIFE_FIELDS } from '@sundial/core';
import { TIMER_REF, TIMER_SCHEMA } from './openapi-schemas';

/*
 * OpenAPI shapes of docs/spec.md §3.9 over HTTP (explain.controller.ts): the ledger, next times, a
 * spec's preview, describe.
 */

/**
 * preview's `spec` (NormalizedSpec, docs/spec.md §3.9): the TimerSpec validated, every default applied,
 * its schedule one form (`kind` with `delayMs`, `atMs`, `everyMs` or `cron`), durations and instants in
 * ms — not the TimerSpec's shape (`"5s"` is `delayMs: 5000`), but a Timer's fields bar its life's.
 */
export const NORMALIZED_SPEC_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['key', 'handler', 'payload', 'kind', 'awaitTask', 'removeOnComplete', 'ifExists', 'delivery'],
  properties: {
    ...Object.fromEntries(
      Object.entries(TIMER_SCHEMA.properties ?? {}).filter(
        ([name]) => !(TIMER_LIFE_FIELDS as readonly string[]).includes(name),
      ),
    ),
    atMs: { type: 'number', description: 'a one-shot given `at`: its due, epoch ms' },
    ifExists: { type: 'string', enum: ['error', 'replace', 'keep'] },
  },
};

const ISO: SchemaObject = { type: 'string', format: 'date-time' };

export const LEDGER_ENTRY_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['at', 'event', 'version'],
  properties: {
    at: ISO,
    event: {
      type: 'string',
      enum: [
        'scheduled',
        'replaced',
        'rescheduled',
        'armed',
        'claimed',
        'completed',
        'failed',
        'stale',
        'skipped',
        'lost',
        'cancelled',
        'paused',
        'resumed',
        'triggered',
        'retried',
        'backfilled',
      ],
    },
    version: { type: 'integer' },
    workerId: {
      type: 'string',
      description:
        'Redis only: the worker that claimed the run (claimed), ran it (completed, failed), whose claim or ' +
        'late completion was refused (stale), or whose lease ran out (lost); absent where none is known ' +
        '(entries an earlier release wrote without it)',
    },
    reason: {
      type: 'string',
      description:
        "why: a failed or lost run's is its error's reason; a completed run's, why it ended its timer " +
        "(no-next-slot, ended, max-runs); a stale, skipped, cancelled or paused entry's, why that happened",
    },
    ended: {
      type: 'string',
      enum: ['no-next-slot', 'ended', 'max-runs'],
      description:
        'failed or lost: why the run ended its timer unasked (no slot after it, the next after endAt, or the ' +
        'last run maxRuns allows), as a completed entry says in `reason`; absent when the timer went on ' +
        '(and in older entries)',
    },
    message: { type: 'string' },
    count: { type: 'integer' },
    attempt: { type: 'integer' },
    due: ISO,
  },
};

export const HISTORY_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['key', 'entries'],
  properties: { key: { type: 'string' }, entries: { type: 'array', items: LEDGER_ENTRY_SCHEMA } },
};

const NEXT_TIME_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['at', 'offset'],
  properties: { at: ISO, offset: { type: 'string', example: '-05:00' } },
};

export const NEXT_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['key', 'times'],
  properties: { key: { type: 'string' }, times: { type: 'array', items: NEXT_TIME_SCHEMA } },
};

export const PREVIEW_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['spec', 'next'],
  properties: {
    spec: { $ref: '#/components/schemas/NormalizedSpec' },
    next: { type: 'array', items: NEXT_TIME_SCHEMA },
  },
};

export const DESCRIPTION_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['timer', 'next', 'history', 'counters'],
  properties: {
    timer: TIMER_REF,
    next: { type: 'array', items: NEXT_TIME_SCHEMA },
    history: { type: 'array', items: LEDGER_ENTRY_SCHEMA },
    counters: {
      type: 'object',
      description:
        "The timer's own: runs from its row, the others counted over history since its newest scheduled entry (stale entries with reason gone are another timer's).",
      required: ['runs', 'failures', 'stale', 'skipped', 'lost', 'requeued'],
      properties: {
        runs: { type: 'integer' },
        failures: { type: 'integer' },
        stale: { type: 'integer' },
        skipped: { type: 'integer' },
        lost: {
          type: 'integer',
          description: 'At-most-once runs whose worker was lost, recorded failed with reason lost.',
        },
        requeued: {
          type: 'integer',
          description: 'At-least-once runs whose worker was lost, put back to run again.',
        },
      },
    },
  },
};

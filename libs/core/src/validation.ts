import { validateCron } from './cron';
import {
  givenFields,
  type Input,
  isGiven,
  oneOf,
  optionalBoolean,
  plainObject,
  rejectUnknownFields,
} from './input-checks';
import { refuseOwnerMark } from './owner-mark';
import { refusals } from './refusals';
import { normalizeRunPolicies } from './run-policies';
import { type SizeLimit, toJsonValue } from './json-value';
import { type EveryLimit, normalizeAt, normalizeDelay, normalizeEvery } from './time-fields';
import { validateHandler, validateNewKey } from './names';
import { showValue } from './show-value';
import { normalizeSlotPolicy } from './slot-fields';
import { SPEC_FIELDS } from './spec-fields';
import type { Delivery, IfExists, JsonObject, NormalizedSpec } from './types';

/** Cluster-wide limits on what a spec may ask for (docs/spec.md §5.4). */
export interface ValidationLimits {
  /** `SUNDIAL_MAX_PAYLOAD_BYTES`: payload (and meta) size as UTF-8 JSON */
  maxPayloadBytes: number;
  /** `SUNDIAL_MIN_EVERY_MS`: the shortest interval */
  minEveryMs: number;
}

export const DEFAULT_LIMITS: ValidationLimits = { maxPayloadBytes: 65_536, minEveryMs: 100 };

/**
 * Where a process sets each limit, as the fix of a refusal by that limit names it: a library's option
 * (the default, as RedisTimers, createEngine and SundialModule take it) or the standalone scheduler's
 * environment variable (ENV_LIMIT_SETTINGS).
 */
export type LimitSettings = Record<keyof ValidationLimits, string>;

export const OPTION_LIMIT_SETTINGS: LimitSettings = {
  maxPayloadBytes: 'the limits.maxPayloadBytes option',
  minEveryMs: 'the limits.minEveryMs option',
};

export const ENV_LIMIT_SETTINGS: LimitSettings = {
  maxPayloadBytes: 'SUNDIAL_MAX_PAYLOAD_BYTES',
  minEveryMs: 'SUNDIAL_MIN_EVERY_MS',
};

/** The limits a spec is checked against (DEFAULT_LIMITS for those not given) and where they are set. */
export interface SpecLimits extends Partial<ValidationLimits> {
  setBy?: LimitSettings;
}

const SCHEDULE_FIELDS = ['delay', 'at', 'every', 'cron'] as const;
const WHEN_FIELDS = ['delay', 'at'] as const;
const IF_EXISTS: readonly IfExists[] = ['error', 'replace', 'keep'];
const DELIVERIES: readonly Delivery[] = ['at-least-once', 'at-most-once'];
type Schedule = Pick<NormalizedSpec, 'kind' | 'delayMs' | 'atMs' | 'everyMs' | 'cron' | 'tz'>;

/**
 * Validates a TimerSpec from code or from an HTTP body and returns it with every default applied
 * (docs/spec.md §2). Throws SundialError: `payload-too-large` for an oversized payload or meta, else
 * `invalid`.
 * An optional field that is `undefined` or `null` counts as absent (JSON clients often send null);
 * only `payload: null` is a value, and also its default. `meta.sundialOwner` is refused unless
 * `ownedRow` (the write of a declarative source, `WriteOptions.ownedRow`).
 */
export function normalizeSpec(spec: unknown, limits: SpecLimits = {}, ownedRow = false): NormalizedSpec {
  const setBy = limits.setBy ?? OPTION_LIMIT_SETTINGS;
  const payloadLimit = {
    maxBytes: limits.maxPayloadBytes ?? DEFAULT_LIMITS.maxPayloadBytes,
    setBy: setBy.maxPayloadBytes,
  };
  const input = plainObject(
    spec,
    undefined,
    '{ "key": "invoice:42", "handler": "invoice.remind", "delay": "3d" }',
  );
  rejectUnknownFields(input, SPEC_FIELDS, 'the timer spec');
  const key = validateNewKey(input.key);
  const handler = validateHandler(input.handler);
  const schedule = normalizeSchedule(input, {
    min: limits.minEveryMs ?? DEFAULT_LIMITS.minEveryMs,
    setBy: setBy.minEveryMs,
  });
  const maxRuns = normalizeMaxRuns(input.maxRuns, schedule.kind);
  const meta = normalizeMeta(input.meta, payloadLimit);
  if (!ownedRow) refuseOwnerMark(meta);
  const runPolicies = normalizeRunPolicies(
    input,
    schedule.kind,
    normalizeAwaitTask(input.awaitTask, schedule.kind),
    isGiven(input.awaitTask),
  );
  const payload = toJsonValue(input.payload === undefined ? null : input.payload, 'payload', payloadLimit);
  const removeOnComplete = optionalBoolean(input.removeOnComplete, 'removeOnComplete', true);
  const ifExists = oneOf(input.ifExists, 'ifExists', IF_EXISTS);
  const delivery = oneOf(input.delivery, 'delivery', DELIVERIES);
  const slotPolicy = normalizeSlotPolicy(input, schedule, runPolicies.awaitTask);
  // Set field by field on an empty literal, not spread into a literal with properties: scheduleMany
  // normalizes every spec of a batch before it sends any, and a batch's specs live until its replies —
  // V8 then moves a literal's allocation site to the old generation, which made every spec (and the young
  // objects it points to) cost a major collection (docs/design.md "Performance", scheduleMany).
  const normalized = {} as NormalizedSpec;
  normalized.key = key;
  normalized.handler = handler;
  normalized.payload = payload;
  normalized.kind = schedule.kind;
  normalized.awaitTask = runPolicies.awaitTask;
  normalized.removeOnComplete = removeOnComplete;
  normalized.ifExists = ifExists;
  normalized.delivery = delivery;
  if (schedule.delayMs !== undefined) normalized.delayMs = schedule.delayMs;
  if (schedule.atMs !== undefined) normalized.atMs = schedule.atMs;
  if (schedule.everyMs !== undefined) normalized.everyMs = schedule.everyMs;
  if (schedule.cron !== undefined) normalized.cron = schedule.cron;
  if (schedule.tz !== undefined) normalized.tz = schedule.tz;
  if (runPolicies.overlap !== undefined) normalized.overlap = runPolicies.overlap;
  if (runPolicies.retry !== undefined) normalized.retry = runPolicies.retry;
  if (runPolicies.pauseAfterFailures !== undefined)
    normalized.pauseAfterFailures = runPolicies.pauseAfterFailures;
  if (runPolicies.timeout !== undefined) normalized.timeout = runPolicies.timeout;
  if (maxRuns !== undefined) normalized.maxRuns = maxRuns;
  if (meta !== undefined) normalized.meta = meta;
  return Object.assign(normalized, slotPolicy);
}

/** The new due time of `reschedule(key, when)`: `{ delay }` relative to now or `{ at }` absolute. */
export function normalizeWhen(when: unknown, field = 'when'): { delayMs: number } | { atMs: number } {
  const input = plainObject(when, field, '{ delay: "10m" } or { at: "2026-03-01T09:00:00Z" }');
  rejectUnknownFields(input, WHEN_FIELDS, field);
  const given = givenFields(input, WHEN_FIELDS);
  if (given.length !== 1) {
    throw refusals.invalid(
      given.length === 0 ? field : 'at',
      given.length === 0 ? `${field} has neither delay nor at` : `${field} has both delay and at`,
      'Give exactly one of delay (e.g. "10m") or at (e.g. "2026-03-01T09:00:00Z").',
    );
  }
  return given[0] === 'delay' ? { delayMs: normalizeDelay(input.delay) } : { atMs: normalizeAt(input.at) };
}

/** `backfill(key, { from, to })`: two instants, epoch ms or ISO-8601 with offset. */
export function normalizeBackfillRange(range: unknown): { from: number; to: number } {
  const input = plainObject(range, 'range', '{ from: "2026-03-01T00:00:00Z", to: "2026-03-02T00:00:00Z" }');
  rejectUnknownFields(input, ['from', 'to'], 'the backfill range');
  return { from: normalizeAt(input.from, 'from'), to: normalizeAt(input.to, 'to') };
}

function normalizeSchedule(input: Input, minEvery: EveryLimit): Schedule {
  const given = givenFields(input, SCHEDULE_FIELDS);
  if (given.length === 0) {
    throw refusals.invalid(
      undefined,
      'the timer has no schedule: none of delay, at, every, cron was given',
      'Give exactly one of delay (e.g. "10m"), at (e.g. "2026-03-01T09:00:00Z"), every (e.g. "30s") ' +
        'or cron with tz (e.g. cron "0 7 * * MON-FRI" and tz "America/Toronto").',
    );
  }
  if (given.length > 1) {
    throw refusals.invalid(
      given[1],
      `the timer has ${listed(given)}, but a timer has exactly one schedule`,
      `Keep only one of ${listed(given)}: delay or at runs once, every repeats on an interval, cron follows a calendar.`,
    );
  }
  if (given[0] !== 'cron' && isGiven(input.tz)) {
    throw refusals.invalid(
      'tz',
      `tz ${showValue(input.tz)} was given without cron`,
      'Remove tz: it only applies to cron.',
    );
  }
  switch (given[0]) {
    case 'delay':
      return { kind: 'once', delayMs: normalizeDelay(input.delay) };
    case 'at':
      return { kind: 'once', atMs: normalizeAt(input.at) };
    case 'every':
      return { kind: 'interval', everyMs: normalizeEvery(input.every, minEvery) };
    case 'cron':
      return { kind: 'cron', ...normalizeCron(input.cron, input.tz) };
  }
}

function normalizeCron(cron: unknown, tz: unknown): { cron: string; tz: string } {
  if (typeof cron !== 'string') {
    throw refusals.invalid(
      'cron',
      `cron ${showValue(cron)} is not a string`,
      'Write cron as a string, e.g. "0 7 * * MON-FRI".',
    );
  }
  if (!isGiven(tz)) {
    throw refusals.invalid(
      'tz',
      `cron ${showValue(cron)} has no tz: a cron is read on the wall clock of a named zone`,
      'Add tz with an IANA zone name, e.g. "America/Toronto", or "UTC".',
    );
  }
  validateCron(cron, tz as string);
  return { cron: cron.trim(), tz: tz as string };
}

function normalizeMaxRuns(maxRuns: unknown, kind: NormalizedSpec['kind']): number | undefined {
  if (!isGiven(maxRuns)) return undefined;
  if (!Number.isSafeInteger(maxRuns) || (maxRuns as number) < 1) {
    throw refusals.invalid(
      'maxRuns',
      `maxRuns ${showValue(maxRuns)} is not a positive integer`,
      'Write maxRuns as a whole number of runs, 1 or more, e.g. 10.',
    );
  }
  if (kind === 'once') {
    throw refusals.invalid(
      'maxRuns',
      `maxRuns ${showValue(maxRuns)} was given for a one-shot timer (delay/at), which runs once anyway`,
      'Remove maxRuns, or use every or cron for a timer that repeats.',
    );
  }
  return maxRuns as number;
}

/** Only intervals await their task; `false` elsewhere would promise overlap that never happens. */
function normalizeAwaitTask(awaitTask: unknown, kind: NormalizedSpec['kind']): boolean {
  const value = optionalBoolean(awaitTask, 'awaitTask', true);
  if (!value && kind !== 'interval') {
    throw refusals.invalid(
      'awaitTask',
      `awaitTask false was given for a ${kind} timer; it only applies to every (interval) timers`,
      kind === 'cron'
        ? 'Remove awaitTask: a cron slot that comes while the last run is still running is skipped; overlap "allow" runs it beside.'
        : 'Remove awaitTask: a one-shot timer runs once.',
    );
  }
  return value;
}

function normalizeMeta(meta: unknown, limit: SizeLimit): JsonObject | undefined {
  if (!isGiven(meta)) return undefined;
  plainObject(meta, 'meta', 'an object such as { "team": "billing" }');
  return toJsonValue(meta, 'meta', limit) as JsonObject;
}

/** "a and b", "a, b and c" */
function listed(names: readonly string[]): string {
  return names.length > 1
    ? `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`
    : names.join('');
}

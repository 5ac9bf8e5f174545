import {
  type JsonObject,
  normalizeSpec,
  type RowOwner,
  type SpecLimits,
  type Timer,
  type TimerSpec,
} from '@sundial/core';
import { CRON_POLICY_OPTIONS } from '../decorators/distributed-cron.decorator';
import type { DiscoveredRow } from '../handler-registry';

/** Every `@DistributedCron` row lives under this key prefix: `cron:<name>`. */
export const CRON_KEY_PREFIX = 'cron:';
/** Every `@DistributedInterval` row lives under this one: `interval:<name>`. */
export const INTERVAL_KEY_PREFIX = 'interval:';
/** The `meta` marker of rows the registrar owns; timers created through the API never carry it. */
export const CRON_OWNER_MARKER = 'distributed-cron';
export const INTERVAL_OWNER_MARKER = 'distributed-interval';

/**
 * The key prefix and marker of each kind of row. Separate prefixes: a replica of an older release
 * (rolling deploy) lists only `cron:` and so never removes an interval row as an orphan.
 */
export const ROW_KINDS = {
  cron: { prefix: CRON_KEY_PREFIX, marker: CRON_OWNER_MARKER },
  interval: { prefix: INTERVAL_KEY_PREFIX, marker: INTERVAL_OWNER_MARKER },
} as const;

export function cronKey(name: string): string {
  return `${CRON_KEY_PREFIX}${name}`;
}

export function intervalKey(name: string): string {
  return `${INTERVAL_KEY_PREFIX}${name}`;
}

export function rowKey(row: Pick<DiscoveredRow, 'kind' | 'name'>): string {
  return `${ROW_KINDS[row.kind].prefix}${row.name}`;
}

/** When a row runs, its source resolved: a cron's expression and zone, or an interval's period. */
export type RowSchedule = { cron: string; tz: string } | { every: number | string };

/**
 * The row a `@DistributedCron` or `@DistributedInterval` stands for; `app` names the owning app. The
 * policies go on as given (the registrar has already turned `waitForCompletion` into `overlap`).
 */
export function rowSpec(row: DiscoveredRow, schedule: RowSchedule, app: string): TimerSpec {
  const spec = {
    key: rowKey(row),
    handler: row.name,
    ...schedule,
    delivery: row.delivery ?? 'at-least-once',
    meta: ownerMeta(row.kind, app),
  } as TimerSpec;
  for (const option of CRON_POLICY_OPTIONS) {
    if (row[option] !== undefined) Object.assign(spec, { [option]: row[option] });
  }
  return spec;
}

function ownerMeta(kind: DiscoveredRow['kind'], app: string): JsonObject {
  return { sundialOwner: ROW_KINDS[kind].marker, sundialApp: app };
}

const MARKERS: ReadonlySet<unknown> = new Set([CRON_OWNER_MARKER, INTERVAL_OWNER_MARKER]);

/**
 * The rows of `app`'s registrar (not created through the API, nor by another app on the same prefix);
 * one matches when it already says what the decorator says. `limits` are the app's (`SundialModule`'s
 * `limits`): a period the backend accepted under a lower `minEveryMs` is compared, not refused.
 */
export function cronRowOwner(app: string, limits: SpecLimits = {}): RowOwner {
  return {
    owns: (timer) => MARKERS.has(timer.meta?.sundialOwner) && timer.meta?.sundialApp === app,
    matches: (timer, spec) => rowMatches(timer, spec, limits),
  };
}

function rowMatches(timer: Timer, spec: TimerSpec, limits: SpecLimits): boolean {
  // Normalized, as the row stores it: durations and instants in ms, retry with its defaults.
  const wanted = normalizeSpec(spec, limits, true);
  return (
    timer.kind === wanted.kind &&
    timer.handler === wanted.handler &&
    timer.cron === wanted.cron &&
    timer.tz === wanted.tz &&
    timer.everyMs === wanted.everyMs &&
    timer.delivery === wanted.delivery &&
    timer.awaitTask === wanted.awaitTask &&
    (timer.overlap ?? 'skip') === (wanted.overlap ?? 'skip') &&
    (timer.catchup ?? 'once') === (wanted.catchup ?? 'once') &&
    sameRetry(timer.retry, wanted.retry) &&
    timer.pauseAfterFailures === wanted.pauseAfterFailures &&
    timer.timeout === wanted.timeout &&
    timer.catchupWindow === wanted.catchupWindow &&
    timer.jitter === wanted.jitter &&
    timer.startAt === wanted.startAt &&
    timer.endAt === wanted.endAt
  );
}

function sameRetry(stored: Timer['retry'], wanted: Timer['retry']): boolean {
  if (stored === undefined || wanted === undefined) return stored === wanted;
  return (
    stored.attempts === wanted.attempts &&
    stored.backoff.type === wanted.backoff.type &&
    stored.backoff.delay === wanted.backoff.delay &&
    stored.backoff.maxDelay === wanted.backoff.maxDelay
  );
}

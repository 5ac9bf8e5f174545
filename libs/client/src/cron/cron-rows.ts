import { type JsonObject, normalizeSpec, type RowOwner, type Timer, type TimerSpec } from '@sundial/core';
import { CRON_POLICY_OPTIONS } from '../decorators/distributed-cron.decorator';
import type { DiscoveredCron } from '../handler-registry';

/** Every `@DistributedCron` row lives under this key prefix: `cron:<name>`. */
export const CRON_KEY_PREFIX = 'cron:';
/** The `meta` marker of rows the registrar owns; timers created through the API never carry it. */
export const CRON_OWNER_MARKER = 'distributed-cron';

export function cronKey(name: string): string {
  return `${CRON_KEY_PREFIX}${name}`;
}

/**
 * The row a `@DistributedCron` stands for, its expression resolved; `app` names the owning app. The
 * policies go on as given (the registrar has already turned `waitForCompletion: false` into `overlap`).
 */
export function cronSpec(cron: DiscoveredCron, expression: string, app: string): TimerSpec {
  const spec: TimerSpec = {
    key: cronKey(cron.name),
    handler: cron.name,
    cron: expression,
    tz: cron.timeZone ?? 'UTC',
    delivery: cron.delivery ?? 'at-least-once',
    meta: ownerMeta(app),
  };
  for (const option of CRON_POLICY_OPTIONS) {
    if (cron[option] !== undefined) Object.assign(spec, { [option]: cron[option] });
  }
  return spec;
}

function ownerMeta(app: string): JsonObject {
  return { sundialOwner: CRON_OWNER_MARKER, sundialApp: app };
}

/**
 * The rows of `app`'s registrar (not created through the API, nor by another app on the same prefix);
 * one matches when it already says what the decorator says.
 */
export function cronRowOwner(app: string): RowOwner {
  return {
    owns: (timer) => timer.meta?.sundialOwner === CRON_OWNER_MARKER && timer.meta.sundialApp === app,
    matches: rowMatches,
  };
}

function rowMatches(timer: Timer, spec: TimerSpec): boolean {
  // Normalized, as the row stores it: durations and instants in ms, retry with its defaults.
  const wanted = normalizeSpec(spec, {}, true);
  return (
    timer.kind === 'cron' &&
    timer.handler === wanted.handler &&
    timer.cron === wanted.cron &&
    timer.tz === wanted.tz &&
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

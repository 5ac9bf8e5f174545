import type { JsonObject, RowOwner, Timer, TimerSpec } from '@sundial/core';
import type { DiscoveredCron } from '../handler-registry';

/** Every `@DistributedCron` row lives under this key prefix: `cron:<name>`. */
export const CRON_KEY_PREFIX = 'cron:';
/** The `meta` marker of rows the registrar owns; timers created through the API never carry it. */
export const CRON_OWNER_MARKER = 'distributed-cron';

export function cronKey(name: string): string {
  return `${CRON_KEY_PREFIX}${name}`;
}

/** The row a `@DistributedCron` stands for, its expression resolved; `app` names the owning app. */
export function cronSpec(cron: DiscoveredCron, expression: string, app: string): TimerSpec {
  return {
    key: cronKey(cron.name),
    handler: cron.name,
    cron: expression,
    tz: cron.timeZone ?? 'UTC',
    delivery: cron.delivery ?? 'at-least-once',
    meta: ownerMeta(app),
  };
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
  return (
    timer.kind === 'cron' &&
    timer.handler === spec.handler &&
    timer.cron === spec.cron &&
    timer.tz === spec.tz &&
    timer.delivery === spec.delivery
  );
}

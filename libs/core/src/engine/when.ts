import type { NormalizedSpec, Timer } from '../types';

/** A timer's schedule in one comparable form: the time a `keep` call asked for versus the recorded one. */
export type When = Pick<NormalizedSpec, 'kind' | 'delayMs' | 'atMs' | 'everyMs' | 'cron' | 'tz'>;

export function whenOfSpec({ kind, delayMs, atMs, everyMs, cron, tz }: NormalizedSpec): When {
  return { kind, delayMs, atMs, everyMs, cron, tz };
}

/** A one-shot without `delayMs` was scheduled (or rescheduled) at an absolute time: its `dueAt`. */
export function whenOfTimer({ kind, delayMs, dueAt, everyMs, cron, tz }: Timer): When {
  return {
    kind,
    delayMs,
    atMs: kind === 'once' && delayMs === undefined ? dueAt : undefined,
    everyMs,
    cron,
    tz,
  };
}

/** Durations compare as durations and instants as instants, so re-running `delay: '14d'` matches. */
export function describeWhen({ kind, delayMs, atMs, everyMs, cron, tz }: When): string {
  switch (kind) {
    case 'interval':
      return `every ${everyMs} ms`;
    case 'cron':
      return `cron "${cron}" in ${tz}`;
    case 'once':
      return delayMs === undefined ? `at ${new Date(atMs ?? NaN).toISOString()}` : `delay ${delayMs} ms`;
  }
}

/**
 * The fields a TimerSpec takes (docs/spec.md §2), apart from their checks (validation.ts), so that a
 * surface naming them its own way — the CLI's `--max-runs` flags — reads them without the engine.
 */
export const SLOT_POLICY_FIELDS = ['catchup', 'catchupWindow', 'jitter', 'startAt', 'endAt'] as const;

export const SPEC_FIELDS: readonly string[] = [
  'key',
  'handler',
  'payload',
  'delay',
  'at',
  'every',
  'cron',
  'tz',
  'maxRuns',
  'awaitTask',
  'removeOnComplete',
  'meta',
  'ifExists',
  'delivery',
  'overlap',
  'retry',
  'pauseAfterFailures',
  'timeout',
  ...SLOT_POLICY_FIELDS,
];

import { type Timer, TIMER_LIFE_FIELDS } from '@sundial/core';

/** A timer without its life (identity and run state): its handler, payload, meta, schedule and policies. */
export function timerSpecFields(timer: Timer): Partial<Timer> {
  const fields: Partial<Timer> = { ...timer };
  for (const name of TIMER_LIFE_FIELDS) delete fields[name];
  return fields;
}

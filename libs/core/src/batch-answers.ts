import type { Timer } from './types';

/**
 * A `scheduleMany` batch's answers as the batch left their timers (docs/spec.md §3.1), on every backend:
 * a timer that a later spec of the batch replaced (`ifExists: 'replace'` on its key, answered with another
 * id) is answered as that replace left it — `cancelled`, its version one past, as the ledger's `replaced`
 * entry says — not as the live timer it was when its own spec was placed. Before, both answers read
 * pending, one of them gone. A timer answered cancelled already (`keep` within a tombstone) stays as it is.
 */
export function asTheBatchLeftThem(answers: Timer[]): Timer[] {
  const lastId = new Map<string, string>();
  for (const timer of answers) lastId.set(timer.key, timer.id);
  return answers.map((timer) =>
    lastId.get(timer.key) === timer.id || timer.status === 'cancelled'
      ? timer
      : { ...timer, status: 'cancelled', version: timer.version + 1 },
  );
}

import { normalizeBatch } from '../batch-refusals';
import type { Clock } from '../clock';
import { validateKey, validateScope } from '../names';
import { firstSlot } from '../slot-policy';
import type { NormalizedSpec, TimerHandler, TimerSpec } from '../types';
import { normalizeBackfillRange, normalizeSpec, normalizeWhen, type ValidationLimits } from '../validation';
import { assertKnownHandler } from './known-handler';

export interface SpecDeps {
  clock: Clock;
  handlers: Readonly<Record<string, TimerHandler>>;
  limits: Partial<ValidationLimits>;
}

/**
 * A spec as the engine takes it (docs/spec.md §2): valid against the limits, naming a handler it knows,
 * and — the spec's own refusal, before its key is looked up — no endAt before its first slot (§3.3c).
 */
export function engineSpec(deps: SpecDeps, spec: TimerSpec<unknown>, ownedRow: boolean): NormalizedSpec {
  const normalized = normalizeSpec(spec, deps.limits, ownedRow);
  assertKnownHandler(deps.handlers, normalized.handler);
  if (normalized.kind !== 'once') firstSlot(normalized, deps.clock.now());
  return normalized;
}

/**
 * Refuses a write's malformed arguments, as the operation itself would, and changes nothing: the
 * engine's requestId memory asks it before it refuses a bad request id or a conflicting one, so the
 * arguments on their own come first on the engine as on Redis (docs/spec.md §2 "Refusal order", §5.1).
 */
export function checkArguments(deps: SpecDeps, operation: string, args: unknown[], ownedRow: boolean): void {
  const [first, second] = args;
  if (operation === 'schedule') engineSpec(deps, first as TimerSpec, ownedRow);
  else if (operation === 'scheduleMany') normalizeBatch(first, (spec) => engineSpec(deps, spec, ownedRow));
  else if (operation === 'cancelAll') validateScope(first);
  else validateKey(first);
  if (operation === 'reschedule') normalizeWhen(second);
  if (operation === 'backfill') normalizeBackfillRange(second);
}

import { closestName } from '../closest-name';
import { refusals, registerHandler } from '../refusals';
import type { TimerHandler } from '../types';

/**
 * No handler at all: in a Nest app, most likely one not initialized yet (a test that compiled its module
 * and called a service without `init()`): the app's `@OnTimer` methods are found at its init.
 */
const NONE_YET =
  ' (none is registered yet: a Nest app registers its @OnTimer methods when it initializes, so a test calls `await app.init()` before it schedules)';

/**
 * The engine knows its handlers, so a spec naming another one is refused (docs/spec.md §2) — by
 * `schedule` and by `preview`, which refuses what `schedule` refuses (§3.9). The Redis client cannot
 * know the workers' handlers and has no such check.
 */
export function assertKnownHandler(handlers: Readonly<Record<string, TimerHandler>>, name: string): void {
  if (Object.hasOwn(handlers, name)) return;
  const known = Object.keys(handlers);
  const guess = closestName(name, known);
  throw refusals.invalid(
    'handler',
    `no handler named "${name}" is registered with this engine`,
    guess
      ? `Did you mean "${guess}"? Use it, or register "${name}": ${registerHandler(name)}.`
      : `Register "${name}": ${registerHandler(name)}${known.length ? `; or use one of ${known.join(', ')}` : NONE_YET}.`,
  );
}

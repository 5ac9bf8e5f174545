import { existsSync } from 'node:fs';

// Why a file of its own: suites that run an app with a wrong clock share how it is found and set.

/** libfaketime (Debian's `faketime` package), preloaded into an app to move its wall clock */
const LIBFAKETIME = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';

/** Whether libfaketime is installed; a suite that needs it says so and skips when not. */
export function hasFaketime(): boolean {
  const found = existsSync(LIBFAKETIME);
  if (!found) console.warn(`skipped: ${LIBFAKETIME} is absent (apt-get install faketime)`);
  return found;
}

/**
 * The environment that runs a child's wall clock off Redis's: `offset` as libfaketime reads it (`+1h`,
 * `-600`), or `{ file }` whose content it reads again at each call (a clock stepped while the child
 * runs). The monotonic clock is left alone, as NTP and `date` leave it.
 */
export function faketimeEnv(offset: string | { file: string }): Record<string, string> {
  const clock: Record<string, string> =
    typeof offset === 'string' ? { FAKETIME: offset } : { FAKETIME_TIMESTAMP_FILE: offset.file };
  return { LD_PRELOAD: LIBFAKETIME, FAKETIME_NO_CACHE: '1', FAKETIME_DONT_FAKE_MONOTONIC: '1', ...clock };
}

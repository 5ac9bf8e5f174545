/**
 * Next-occurrence lookups per second for a common and a sparse cron expression (issue 14).
 * Not part of `npm run bench` (no Redis involved): `npm run build`
 * then `node dist/bench/cron-rate.js`. Each lookup starts from a different instant spread
 * over four years, as live timers do, so neither the answer nor the zone's offsets repeat.
 */
import { nextCronOccurrence } from '../libs/core/src/cron';

const CASES: ReadonlyArray<[string, string]> = [
  ['*/5 * * * *', 'America/Toronto'],
  ['0 9 * * MON-FRI', 'Europe/Berlin'],
  ['0 0 29 2 *', 'America/Toronto'],
];
const START = Date.parse('2026-01-01T00:00:00Z');
const SPREAD_MS = 4 * 365 * 86_400_000;
const STEP_MS = 7_919 * 60_000 + 13_000; // a prime number of minutes: starts land on every time of day

function rate(expr: string, tz: string, seconds: number): number {
  let calls = 0;
  const started = performance.now();
  while (performance.now() - started < seconds * 1000) {
    for (let i = 0; i < 20; i++, calls++)
      nextCronOccurrence(expr, tz, START + ((calls * STEP_MS) % SPREAD_MS));
  }
  return calls / ((performance.now() - started) / 1000);
}

for (const [expr, tz] of CASES) {
  rate(expr, tz, 0.3); // warm up
  const perSecond = rate(expr, tz, 2);
  console.log(
    `${JSON.stringify(expr).padEnd(20)} ${tz.padEnd(16)} ${Math.round(perSecond).toLocaleString('en-US').padStart(10)} occurrences/s`,
  );
}

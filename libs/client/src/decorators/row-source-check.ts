import { refusals } from '@sundial/core';
import type { DistributedCronMetadata } from './distributed-cron.decorator';
import type { DistributedIntervalMetadata } from './distributed-interval.decorator';

type RowMetadata = DistributedCronMetadata | DistributedIntervalMetadata;

/**
 * A `@DistributedCron`'s expression or a `@DistributedInterval`'s period, checked for its shape at
 * discovery: written in code (a string; for an interval, ms or a Duration), `{ config: KEY }` or
 * `{ inject: TOKEN }`. Anything else stopped the boot later with a TypeError (`Cannot use 'in' operator
 * to search for 'config' in undefined`: `@DistributedCron('digest', process.env.DIGEST_CRON!)`, read when
 * the class loads, before any .env is) or named a provider `undefined` (a `Date`, `{ confg: … }`).
 */
export function checkRowSource(owner: string, row: RowMetadata): void {
  const cron = row.kind === 'cron';
  const source: unknown = cron ? row.expression : row.every;
  if (cron ? typeof source === 'string' : typeof source === 'string' || typeof source === 'number') return;
  if (isSource(source)) return;
  const decorator = `@${cron ? 'DistributedCron' : 'DistributedInterval'}('${row.name}') on ${owner}`;
  const what = cron ? 'expression' : 'period';
  const written = cron ? 'a cron string' : 'ms, a Duration';
  throw refusals.invalid(
    cron ? 'cron' : 'every',
    `${decorator}: its ${what} is ${describe(source)}, not ${written}, { config: KEY } or { inject: TOKEN }.`,
    fixFor(source, row.name, cron),
  );
}

/** `{ config: 'KEY' }` or `{ inject: TOKEN }`, and nothing beside. */
function isSource(source: unknown): boolean {
  if (typeof source !== 'object' || source === null || Array.isArray(source)) return false;
  const fields = Object.keys(source);
  if (fields.length !== 1) return false;
  const { config, inject } = source as { config?: unknown; inject?: unknown };
  if (fields[0] === 'config') return typeof config === 'string' && config !== '';
  if (fields[0] !== 'inject') return false;
  return typeof inject === 'string' || typeof inject === 'symbol' || typeof inject === 'function';
}

function describe(source: unknown): string {
  if (source instanceof Date) return 'a Date';
  if (typeof source === 'object' && source !== null && !Array.isArray(source)) {
    const fields = Object.keys(source);
    return fields.length === 0 ? 'an object without fields' : `an object of ${fields.join(', ')}`;
  }
  if (Array.isArray(source)) return 'an array';
  if (typeof source === 'function') return 'a function';
  return typeof source === 'bigint' ? `${source}n` : String(source);
}

function fixFor(source: unknown, name: string, cron: boolean): string {
  const key = `${name.replace(/[^A-Za-z0-9]+/g, '_').toUpperCase()}_${cron ? 'CRON' : 'EVERY'}`;
  if (source === undefined || source === null) {
    return (
      `A decorator's arguments are read when its class loads, before ConfigModule reads .env: a process.env value is undefined then. ` +
      `Give { config: '${key}' } (read through ConfigService at boot), or write the ${cron ? 'expression' : 'period'} in code.`
    );
  }
  if (source instanceof Date) {
    return `A run at a date is a one-shot timer, not a row: timers.schedule({ key, handler: '${name}', at: date.getTime() }) (@nestjs/schedule's @Cron(new Date(…))).`;
  }
  if (cron && typeof source === 'number') {
    return `A period in ms is @DistributedInterval('${name}', ${source}); a cron is a string such as "0 9 * * *".`;
  }
  // `{ confg: 'KEY' }`, `{ config: 'A', inject: B }`, a number for a cron, an array…
  return `Write { config: '${key}' } (a ConfigService key) or { inject: TOKEN } (a provider of the value), that one field alone, or the ${cron ? 'expression as a string' : 'period as ms or a Duration'} in code.`;
}

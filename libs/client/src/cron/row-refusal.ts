import { SundialError } from '@sundial/core';
import type { DiscoveredRow } from '../handler-registry';

/** `@DistributedCron('digest') on Reports.digest`: how a refusal names the decorator it came from. */
export function decoratorOf(row: DiscoveredRow): string {
  const decorator = row.kind === 'interval' ? 'DistributedInterval' : 'DistributedCron';
  return `@${decorator}('${row.name}') on ${row.owner}`;
}

export function rowRefusal(row: DiscoveredRow, field: string, message: string, fix: string): SundialError {
  return new SundialError({ reason: 'invalid', field, message: `${decoratorOf(row)}: ${message}`, fix });
}

/** A refused row names the decorator it came from. */
export function withOwner(row: DiscoveredRow, error: unknown): unknown {
  if (!(error instanceof SundialError)) return error;
  return new SundialError({ ...error.toJSON(), message: `${decoratorOf(row)}: ${error.message}` });
}

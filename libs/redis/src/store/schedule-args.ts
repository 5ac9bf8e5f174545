import { firstSlot, type NormalizedSpec } from '@sundial/core';
import type { RowFields } from './row';

/** schedule.lua's ARGV[5] (the specs, one JSON array) and what the client knows of them (ARGV[6], ARGV[7]). */
export interface ScheduleArgs {
  specs: (string | number)[];
  /** no key is in the call twice: schedule.lua keeps no table of the keys it met */
  distinct: boolean;
  /** every spec is a plain one-shot, sent as 4 elements (`plainArgs`) */
  plain: boolean;
}

/**
 * What schedule.lua takes for the specs of `indexes` (whose rows are `rows`). A call of plain one-shots
 * only — ifExists 'error', an `at`, no row field but the handler `h` and payload `p`: a bulk schedule's
 * usual call — sends 4 elements a spec: key, at, h, p ('' for none). Any other call 7 + 2n: key, ifExists,
 * kind, at ('' for none), h, p, the number n of its other row fields, then those as name/value pairs.
 * Each element Redis decodes costs it ~0.6k instructions (cjson, docs/design.md "scheduleMany").
 */
export function scheduleArgs(
  indexes: number[],
  specs: NormalizedSpec[],
  rows: RowFields[],
  redisNow: number,
): ScheduleArgs {
  const keys = new Set<string>();
  let plain = true;
  for (let n = 0; n < indexes.length; n++) {
    const spec = specs[indexes[n]];
    keys.add(spec.key);
    plain &&=
      spec.kind === 'once' &&
      spec.ifExists === 'error' &&
      spec.atMs !== undefined &&
      onlyHandlerAndPayload(rows[n]);
  }
  const distinct = keys.size === indexes.length;
  return {
    specs: plain ? plainArgs(indexes, specs, rows) : fullArgs(indexes, specs, rows, redisNow),
    distinct,
    plain,
  };
}

function onlyHandlerAndPayload(row: RowFields): boolean {
  for (const name in row) if (name !== 'h' && name !== 'p') return false;
  return true;
}

function plainArgs(indexes: number[], specs: NormalizedSpec[], rows: RowFields[]): string[] {
  const args: string[] = [];
  for (let n = 0; n < indexes.length; n++) {
    const row = rows[n];
    // `at` as text: Lua would print a number back as a float
    args.push(specs[indexes[n]].key, String(specs[indexes[n]].atMs), row.h, row.p ?? '');
  }
  return args;
}

function fullArgs(
  indexes: number[],
  specs: NormalizedSpec[],
  rows: RowFields[],
  redisNow: number,
): (string | number)[] {
  const args: (string | number)[] = [];
  for (let n = 0; n < indexes.length; n++) {
    const spec = specs[indexes[n]];
    // A periodic timer's first slot (startAt; an endAt before it is refused here): a cron's is sent, an
    // interval's schedule.lua finds on the grid anchored at Redis now.
    const slot = spec.kind === 'once' ? undefined : firstSlot(spec, redisNow);
    const at = spec.kind === 'cron' ? slot : spec.atMs;
    const row = rows[n];
    const atText = at === undefined ? '' : String(at); // a string: Lua would print a number back as a float
    // h and p always ('' for none): every spec has a handler, most a payload, so their names are not sent
    const counted = args.push(spec.key, spec.ifExists, spec.kind, atText, row.h, row.p ?? '', 0) - 1;
    for (const name in row) {
      if (name !== 'h' && name !== 'p') args.push(name, row[name]);
    }
    args[counted] = (args.length - counted - 1) / 2;
  }
  return args;
}

import type { NormalizedSpec } from '@sundial/core';
import type { SundialKeys } from './keys';
import type { CallRequests } from './requests';

/**
 * How StoreCommands.scheduleAll splits a batch into schedule.lua calls (docs/design.md "Store scripts and
 * arguments"), and what each call names: its guards, and a caller's request's first call per partition.
 */

/**
 * Specs per schedule call (~10 µs of Redis each, and a fixed part per call worth ~1 µs per spec at this
 * size): a batch's calls are all sent at once, and Redis reads other clients' commands between them, so a
 * big batch holds it for about a millisecond at a time at most — the fire path's claims, due to the
 * millisecond, wait behind one call, not a whole batch.
 */
export const SCHEDULE_BATCH = 100;

/** One schedule.lua call: a partition and the indexes (into the caller's array) of its specs. */
export interface ScheduleCall {
  partition: number;
  indexes: number[];
}

/** One call per partition and per `perCall` keys, so no single call holds Redis for long. */
export function scheduleCalls(
  sundialKeys: Pick<SundialKeys, 'partitionOf'>,
  keys: string[],
  perCall = SCHEDULE_BATCH,
): ScheduleCall[] {
  const byPartition = new Map<number, number[]>();
  keys.forEach((key, index) => {
    const partition = sundialKeys.partitionOf(key);
    const indexes = byPartition.get(partition);
    if (indexes) indexes.push(index);
    else byPartition.set(partition, [index]);
  });
  return [...byPartition].flatMap(([partition, indexes]) =>
    Array.from({ length: Math.ceil(indexes.length / perCall) }, (_, n) => ({
      partition,
      indexes: indexes.slice(n * perCall, (n + 1) * perCall),
    })),
  );
}

/** The request id of each partition's first call, for a caller's request (whose twin may have run them). */
export function firstCalls(calls: ScheduleCall[], requests: CallRequests): Map<number, string> {
  const firsts = new Map<number, string>();
  if (!requests.named) return firsts;
  calls.forEach(({ partition }, n) => {
    if (!firsts.has(partition)) firsts.set(partition, requests(`s${n}`).id);
  });
  return firsts;
}

/** The ifExists 'error' keys of the calls other than `n`: its guards. */
export function guardKeys(specs: NormalizedSpec[], calls: ScheduleCall[], n: number): string[] {
  const keys: string[] = [];
  calls.forEach(({ indexes }, m) => {
    if (m === n) return;
    for (const i of indexes) if (specs[i].ifExists === 'error') keys.push(specs[i].key);
  });
  return keys;
}

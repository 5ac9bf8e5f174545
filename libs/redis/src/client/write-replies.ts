import {
  type InactiveOperation,
  isEndedStatus,
  liveKeyInBatch,
  type NormalizedSpec,
  refusals,
  type SundialLogger,
  type Timer,
} from '@sundial/core';
import type { SundialObserver } from '../metrics/observer';
import type { SundialKeys } from '../store/keys';
import type { RowReply } from '../store/replies';
import type { ScheduleCodec } from '../store/store-commands';
import { createdTimer, decodeRow, encodeSpecFields, type RowFields } from '../store/row';
import { stampTraceParent } from '../tracing/trace-parent';

/**
 * What a write's reply means for its caller, apart from RedisTimers (which sends the writes): the row
 * a script answered with, or its refusal; and whether a kept timer ignored the time asked for.
 */

/** A script's reply on one key's row: the row as written, or the refusal it stands for. */
export function expectTimer(key: string, operation: InactiveOperation | 'resume', reply: RowReply): Timer {
  if (reply.code === 'not-found') {
    // a kept row that ended answers its status (includes/row.lua live_row_for); no row answers none
    const ended = reply.fields.s;
    throw isEndedStatus(ended) ? refusals.ended(key, ended, operation) : refusals.notFound(key);
  }
  // a live row that refuses is running (or backfilling, shown as running) or paused; resume refuses neither
  if (reply.code === 'inactive' && operation !== 'resume') {
    throw refusals.inactive(key, reply.fields.s === 'paused' ? 'paused' : 'running', operation);
  }
  if (reply.code !== 'ok') throw new Error(`Unexpected reply '${reply.code}' from ${operation}`);
  return decodeRow(reply.fields);
}

/**
 * A schedule write's two ends (StoreCommands.scheduleAll): its rows encoded per call as the call is sent,
 * and each reply made a Timer as its call is answered — a created row from the spec and the row sent,
 * a kept one from the row Redis holds — or the refusal of a key found live.
 */
export function scheduleCodec(
  specs: NormalizedSpec[],
  operation: 'schedule' | 'scheduleMany',
  logger: SundialLogger,
  keys: SundialKeys,
  observer: SundialObserver | undefined,
): ScheduleCodec<Timer> {
  const encode = (indexes: number[]): RowFields[] => {
    const rows = indexes.map((i) => encodeSpecFields(specs[i]));
    stampTraceParent(rows);
    return rows;
  };
  const answer = (i: number, reply: RowReply, row: RowFields): Timer => {
    if (reply.code === 'ok') {
      if (!reply.again) observer?.scheduled?.({ kind: specs[i].kind });
      return createdTimer(specs[i], row, reply.fields);
    }
    const timer = decodeRow(reply.fields);
    warnIfKeptMoved(logger, keys, specs[i], timer);
    return timer;
  };
  // A batch's refusal names the spec that asked for the live key (docs/spec.md §3.1).
  const duplicate = (key: string): unknown =>
    operation === 'scheduleMany' ? liveKeyInBatch(specs, key) : refusals.duplicateKey(key);
  return { encode, answer, duplicate };
}

/**
 * ifExists 'keep': the first call names the time; a later call asking for another one is only logged.
 */
export function warnIfKeptMoved(
  logger: SundialLogger,
  keys: SundialKeys,
  spec: NormalizedSpec,
  kept: Timer,
): void {
  const sameSchedule =
    spec.kind === kept.kind &&
    spec.delayMs === kept.delayMs &&
    spec.everyMs === kept.everyMs &&
    spec.cron === kept.cron &&
    spec.tz === kept.tz &&
    (spec.atMs === undefined || kept.delayMs !== undefined || spec.atMs === kept.dueAt);
  if (!sameSchedule) {
    const { key, id, version, status, handler } = kept;
    logger.warn(`ifExists 'keep' returned the existing timer unchanged; the requested time is ignored`, {
      key,
      id,
      version,
      partition: keys.partitionOf(key),
      handler,
      status,
    });
  }
}

import type { Preview, Timer } from '@sundial/core';
// The module itself, not @sundial/core's index: the same code the operator UI's Run again and Schedule
// again build their spec with (libs/core/src/browser), without loading the engine at every invocation.
import {
  againSpec,
  againWay,
  endAtLeftOutText,
  firstSlotProbe,
  ownerOf,
} from '../../../../libs/core/src/browser/again-spec';
import { noRowToCopy, ownedRow, stillLive } from '../again-refusals';
import { onlyOptions, option, requireKey } from '../args';
import { CliError } from '../cli-error';
import type { Command } from '../command';
import { type SundialHttp, timerPath } from '../http';
import { printable, time } from '../output';
import { timerText } from '../timer-text';
import { idempotencyHeader } from './timer-action';

const usage = 'sundial again <key> [--idempotency-key <id>] [--json]';

/**
 * A kept timer that ended (`completed` or `failed`, kept by `removeOnComplete: false`) scheduled again
 * under its key from its row, as the operator UI's Run again (a one-shot: due now) and Schedule again (an
 * interval or cron: on its schedule from now, every policy of its row, `maxRuns` counted afresh) do:
 * `GET /v1/timers/:key`, then `POST /v1/timers` with what again-spec.ts reads from the row. A live timer,
 * a row a declarative source owns and a key with no row (a cancelled timer leaves none, docs/spec.md §3.1)
 * are refused, nothing sent.
 */
export const again: Command = {
  usage,
  async run({ args, api, out }) {
    onlyOptions(args, ['idempotency-key'], usage);
    const key = requireKey(args, usage);
    const idempotencyKey = option(args, 'idempotency-key');
    const row = await readRow(api, key);
    const way = againWay(row);
    const owned = ownerOf(row);
    if (way === 'owned' && owned) throw ownedRow(row, owned);
    // A live timer: refused, unless this may be a retry with the same --idempotency-key of a call that
    // scheduled it, which the API answers as the first call (sent from the new row, the same spec).
    const live = way === 'none';
    if (live && idempotencyKey === undefined) throw stillLive(row);
    // an endAt passed by the scheduler's now (the answer's Sundial-Now), not this host's, or before the new
    // timer's first slot, which the scheduler's preview says (its zone rules, its clock)
    const now = await api.now();
    const { spec, endAtLeftOut } = againSpec(row, now, await firstSlotAt(api, firstSlotProbe(row, now)));
    let timer: Timer;
    try {
      timer = await api.request<Timer>('POST', 'timers', {
        body: spec,
        headers: idempotencyHeader(idempotencyKey),
        key,
      });
    } catch (error) {
      if (live && error instanceof CliError && error.reason === 'duplicate-key') throw stillLive(row);
      throw error;
    }
    // the timer the key already had: a retry of the same --idempotency-key, nothing scheduled
    if (timer.id === row.id) {
      out.result(timer, () => `${timer.key} was already scheduled: nothing changed\n${timerText(timer)}`);
      return;
    }
    if (row.kind !== 'once' && row.maxRuns !== undefined) {
      out.progress(
        `${printable(key)}: its maxRuns (${row.maxRuns}) counts afresh: up to ${row.maxRuns} runs from now.`,
      );
    }
    if (endAtLeftOut !== undefined) {
      out.progress(`${printable(key)}: ${endAtLeftOutText(endAtLeftOut, time(endAtLeftOut.at))}`);
    }
    out.result(timer, () => `scheduled\n${timerText(timer)}`);
  },
};

/** The row under `key`; none is refused with the fix of a timer removed when it ended. */
async function readRow(api: SundialHttp, key: string): Promise<Timer> {
  try {
    return await api.request<Timer>('GET', timerPath(key), { key });
  } catch (error) {
    if (error instanceof CliError && error.reason === 'not-found' && error.field === 'key') {
      throw noRowToCopy(key, error);
    }
    throw error;
  }
}

/** The first slot of `probe` by the scheduler's preview (POST /v1/preview?count=1), when there is one to ask. */
async function firstSlotAt(
  api: SundialHttp,
  probe: Record<string, unknown> | undefined,
): Promise<number | undefined> {
  if (probe === undefined) return undefined;
  const { next } = await api.request<Preview>('POST', 'preview', { body: probe, query: { count: 1 } });
  return next.length ? Date.parse(next[0].at) : undefined;
}

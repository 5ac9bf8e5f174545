import type { CancelAnswer, LedgerEntry, Timer } from '@sundial/core';
import { flag, onlyOptions, option, requireKey } from '../args';
import { CliError, usageError } from '../cli-error';
import type { Command, CommandInput } from '../command';
import { type SundialHttp, timerPath, type Written } from '../http';
import { time } from '../output';
import { idempotencyHeader, readTimer, retryText } from './timer-action';

const usage = 'sundial cancel <key> | --prefix <scope> | --all [--idempotency-key <id>] [--json]';

/** How to say which timers: one key, a non-empty scope, or every timer, on purpose (docs/spec.md §5.6). */
const WHICH_FIX = `Name a key, --prefix <scope> (e.g. --prefix invoice:42:), or --all to cancel every timer on purpose. Usage: ${usage}`;

export const cancel: Command = {
  usage,
  async run(input) {
    const { args } = input;
    onlyOptions(args, ['idempotency-key', 'prefix', 'all'], usage);
    const prefix = option(args, 'prefix');
    const all = flag(args, 'all');
    if (prefix === undefined && !all) return cancelOne(input);
    if (args.positionals.length || (prefix !== undefined && all)) {
      throw usageError('give one of a key, --prefix or --all', WHICH_FIX);
    }
    if (prefix === '') throw usageError('--prefix is empty (it does not mean all)', WHICH_FIX);
    await cancelMany(input, prefix);
  },
};

async function cancelOne({ args, api, out }: CommandInput): Promise<void> {
  const key = requireKey(args, usage);
  const retryKey = option(args, 'idempotency-key');
  // A retry with the same --idempotency-key is answered as the first call was (`{ cancelled: true }`,
  // docs/spec.md §5.2) though it cancels nothing: with no live timer before it, that answer is a replay
  // (with no row at all, so is a `removed` answer). `before`: the row read first, null for none.
  const before = retryKey === undefined ? undefined : ((await readTimer(api, key)) ?? null);
  const live = before === undefined || isLive(before);
  let written: Written<CancelAnswer>;
  try {
    written = await api.write<CancelAnswer>('DELETE', timerPath(key), {
      headers: idempotencyHeader(retryKey),
      key,
    });
  } catch (error) {
    // No live timer: one whose ledger ends with its cancel was cancelled already — a rerun, which changes
    // nothing, as a pause of a paused timer (docs/spec.md §5.6); any other key stays refused.
    const cancelledAt = isNotFound(error) ? await lastCancel(api, key) : undefined;
    if (cancelledAt === undefined) throw error;
    return alreadyCancelled(out, key, cancelledAt);
  }
  const { body: answer, replayed } = written;
  // the first call's answer given again: no row before it, or one kept since (Idempotent-Replayed)
  const replayOf = before === null || replayed ? retryKey : undefined;
  if (!answer.cancelled) return removedRow(out, key, answer.removed, replayOf);
  if (!live) return alreadyCancelled(out, key, await lastCancel(api, key));
  // A live timer before a retry (Idempotent-Replayed): one scheduled under the key since the first call
  // cancelled its timer. The retry cancelled nothing, and that one is still live.
  if (replayed) {
    return out.result({ key, cancelled: false, firstCancelled: true }, () =>
      retryText(retryKey, `cancelled ${key}; the timer scheduled under it since is live, not cancelled`),
    );
  }
  out.result({ key, cancelled: true }, () => `cancelled ${key}`);
}

/**
 * The key's timer had ended, kept by `removeOnComplete: false`: the cancel removed its row (docs/spec.md §3.4).
 * `replayOf`: the retry's --idempotency-key, when no row was there before it — its first call removed it.
 */
function removedRow(
  out: CommandInput['out'],
  key: string,
  removed: Extract<CancelAnswer, { cancelled: false }>['removed'],
  replayOf: string | undefined,
): void {
  if (replayOf === undefined) {
    return out.result(
      { key, cancelled: false, removed },
      () => `${key} had ended (${removed}): its kept row removed`,
    );
  }
  out.result({ key, cancelled: false, firstRemoved: removed }, () =>
    retryText(replayOf, `removed the kept row of ${key} (it had ended ${removed})`),
  );
}

/** A cancel that changed nothing: the key's timer was cancelled before (when, from its ledger if kept). */
function alreadyCancelled(out: CommandInput['out'], key: string, cancelledAt: string | undefined): void {
  out.result({ key, cancelled: false, ...(cancelledAt === undefined ? {} : { cancelledAt }) }, () =>
    cancelledAt === undefined
      ? `${key} was already cancelled: nothing changed`
      : `${key} was already cancelled at ${time(cancelledAt)}: nothing changed`,
  );
}

/** Whether a cancel would cancel `timer` (live: pending, running or paused, docs/spec.md §2). */
function isLive(timer: Timer | null): boolean {
  return timer !== null && ['pending', 'running', 'paused'].includes(timer.status);
}

function isNotFound(error: unknown): boolean {
  return error instanceof CliError && error.reason === 'not-found' && error.field === 'key';
}

/** When the key was cancelled, when its newest ledger entry is that cancel (none: ledger off, or gone). */
async function lastCancel(api: SundialHttp, key: string): Promise<string | undefined> {
  const history = await api
    .request<{ entries: LedgerEntry[] }>('GET', timerPath(key, 'history'), { query: { limit: '1' }, key })
    .catch(() => undefined);
  const [newest] = history?.entries ?? [];
  return newest?.event === 'cancelled' ? newest.at : undefined;
}

/**
 * `DELETE /v1/timers?prefix=<scope>`, or `?all=true` without a scope. A retry with the same
 * `--idempotency-key` is answered as the first call was (its count, docs/spec.md §5.2) though it
 * cancels nothing: so with a key the CLI notes one live timer of the scope first; none, or that one
 * still live after the answer, means the answer is a replay and nothing changed.
 */
async function cancelMany({ args, api, out }: CommandInput, prefix: string | undefined): Promise<void> {
  const retryKey = option(args, 'idempotency-key');
  const witness = retryKey === undefined ? undefined : await liveOne(api, prefix);
  const answer = await api.request<{ cancelled: number }>('DELETE', 'timers', {
    query: prefix === undefined ? { all: 'true' } : { prefix },
    headers: idempotencyHeader(retryKey),
  });
  const which = prefix === undefined ? 'every timer' : `the timers of ${prefix}`;
  const replayed =
    witness !== undefined &&
    answer.cancelled > 0 &&
    (witness === null || (await readTimer(api, witness.key))?.id === witness.id);
  if (!replayed) return out.result(answer, () => `cancelled ${answer.cancelled} timer(s): ${which}`);
  out.result({ cancelled: 0, firstCancelled: answer.cancelled }, () =>
    retryText(retryKey, `cancelled ${answer.cancelled} timer(s): ${which}`),
  );
}

/** One live timer of the scope (every timer without one), null when there is none. */
async function liveOne(api: SundialHttp, prefix: string | undefined): Promise<Timer | null> {
  for (const status of ['pending', 'running', 'paused']) {
    const query = { status, limit: '1', ...(prefix === undefined ? {} : { prefix }) };
    const { items } = await api.request<{ items: Timer[] }>('GET', 'timers', { query });
    if (items.length > 0) return items[0];
  }
  return null;
}

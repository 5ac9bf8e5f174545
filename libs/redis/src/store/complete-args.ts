import type { SlotEnd } from '@sundial/core';
import type { Outcome, RunMode } from './fire-commands';

// Why a file of its own: what a run's completion says (Completion) and how complete.lua takes it (its
// arguments: complete.lua's header) are one contract; FireCommands only sends them.

export interface Completion {
  id: string;
  key: string;
  version: number;
  runCount: number;
  mode: RunMode;
  outcome: Outcome;
  error?: { message: string; reason?: string };
  /** cron: the next occurrence after now */
  cronNext?: number;
  /** cron: slots that passed before the run started (intervals: complete.lua counts them) */
  missed: number;
  /** cron: slots that came while the run went on */
  overlap: number;
  /** cron: `cronNext` is a slot that came during the run, kept by overlap 'buffer-one' */
  buffered?: boolean;
  /** a slot policy's end: no next slot because it is after endAt (docs/spec.md §3.3c) */
  ended?: SlotEnd;
  /**
   * The claimed row was a one-shot: complete.lua reads only the fields a one-shot's completion needs. A
   * hint: when wrong (or absent) the row is read whole, never settled otherwise.
   */
  once?: boolean;
  /**
   * A handler's end after its run was handed back at shutdown (fire/late-ends.ts, docs/spec.md §4.6): sent
   * as outcome `late`, which complete.lua answers stale whatever the row — never the run's outcome, which
   * the hand-back settles (also while its reconcile has not reached that lease yet).
   */
  late?: boolean;
  /** a held one-shot ending ok: its claim's copy of its row, which complete.lua takes unread while true */
  claim?: ClaimCopy;
  /**
   * The worker that ran it (else its claim copy's): its entries name it, a late completion's `stale`
   * too (docs/spec.md §3.9). None for a lost run, whose entry names its lease owner.
   */
  workerId?: string;
}

/**
 * What a held one-shot's completion sends of its claim (completion.ts claimCopy) so that complete.lua
 * need not read its row: the lease's end as the claim set it, the row's `d` and `sa`, the kept ledger
 * entries the claim replied, the worker (its `lw`). complete.lua checks it is still true (the id live,
 * the lease's score exactly that end) and reads the row otherwise (includes/one-shot-rows).
 */
export interface ClaimCopy {
  leaseEnd: number;
  due: string;
  scheduledAt: string;
  kept: string;
  workerId: string;
}

/** complete.lua's arguments after its prefix: the runs as one JSON array, then what goes beside it. */
export function completeArgs(completions: Completion[]): string[] {
  // ARGV[3] the worker of the runs and the claims' copies, then their kept entries (complete.lua's header)
  const worker = completions.map(workerOf).find((id) => id !== undefined);
  const raw: string[] = [];
  const runs = completions.map((c) => {
    const copy = c.claim;
    if (copy && isPlainOneShotOk(c)) {
      // its kept entries and the worker go as arguments of their own, not escaped into the JSON
      if (copy.workerId === worker) {
        raw.push(copy.kept);
        return [
          c.id,
          c.key,
          String(c.version),
          String(c.runCount),
          String(copy.leaseEnd),
          copy.due,
          copy.scheduledAt,
          raw.length,
        ];
      }
    }
    return [
      c.id,
      c.key,
      String(c.version),
      String(c.runCount),
      c.mode,
      c.late ? 'late' : c.outcome,
      wellFormed(c.error?.message ?? ''),
      wellFormed(c.error?.reason ?? ''),
      c.cronNext === undefined ? '' : String(c.cronNext),
      c.missed,
      c.overlap,
      c.buffered ? '1' : '',
      c.ended ?? '',
      c.once ? '1' : '',
      // a run of another worker than ARGV[3]'s (or of none) names its own
      ...(workerOf(c) === worker ? [] : [workerOf(c) ?? '']),
    ];
  });
  return [JSON.stringify(runs), ...(worker === undefined ? [] : [worker, ...raw])];
}

/** The worker that ran a completion's run, as its ledger entries name it. */
function workerOf(c: Completion): string | undefined {
  return c.workerId ?? c.claim?.workerId;
}

/**
 * A held one-shot's run ending ok with nothing else to say (no error, slot, skip or end): what a claim's copy
 * goes with, as complete.lua's 8-element run, its mode, outcome and the rest implied.
 */
function isPlainOneShotOk(c: Completion): boolean {
  return (
    c.mode === 'held' &&
    c.outcome === 'ok' &&
    !c.late &&
    c.once === true &&
    c.error === undefined &&
    c.cronNext === undefined &&
    c.missed === 0 &&
    c.overlap === 0 &&
    !c.buffered &&
    c.ended === undefined
  );
}

/**
 * A string as UTF-8 can carry it: a lone surrogate becomes U+FFFD, as it would sent as a plain argument
 * (cjson would refuse its JSON escape and fail the whole batch).
 */
function wellFormed(text: string): string {
  return text === '' ? text : Buffer.from(text, 'utf8').toString('utf8');
}

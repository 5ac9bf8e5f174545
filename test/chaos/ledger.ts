import type { LedgerEntry, Timer } from '@sundial/core';
import { DEFAULT_CLAIM_AHEAD_MS } from '@sundial/redis';
import type { RunRecord } from '@sundial/testing/harness';
import type { Write } from './load';
import { claimTime, Requeues } from './requeues';

/** Everything the ledger is built from, read after the faults healed and the timers settled. */
export interface LedgerInput {
  writes: Write[];
  /** every handler run, from the sink the handlers write to (not the Redis under test) */
  runs: RunRecord[];
  /** the row each written key holds at the end (`null`: none) */
  rows: Map<string, Timer | null>;
  /** the id in each written key's tombstone (`null`: none), i.e. who was really cancelled */
  tombstones: Map<string, string | null>;
  /** each written key's ledger (`history`, newest first; `[]`: none): why a run ran again */
  histories: Map<string, LedgerEntry[]>;
  /** the workers' lease (SUNDIAL_LEASE_MS) */
  leaseMs: number;
  /** workers the scenario SIGKILLed or stopped: a run they held may run again (at-least-once) or end lost */
  killedPids: Set<number>;
}

export interface Verdict {
  timers: number;
  runs: number;
  /** acknowledged timers or runs that never ended (no run, no recorded outcome) */
  lost: number;
  duplicated: number;
  /**
   * of `duplicated`, those at-least-once allows: the ledger records the first run's lease lost and the run
   * put back (`lost`, reason `requeued`, naming its worker), after that lease could run out
   */
  allowed: number;
  early: number;
  /** runs claimed after a cancel of their timer was acknowledged */
  stale: number;
  /** outcomes recorded or answered that are not what happened */
  wrong: number;
  maxLatenessMs: number;
  /** a few examples of each problem found */
  problems: string[];
}

const EXAMPLES_PER_KIND = 4;

/**
 * Checks every written key against what really ran: each acknowledged (id, version) ends ran, failed,
 * stale (cancelled) or lost, none early, duplicates only where at-least-once allows and the timer's ledger
 * says why (its lease lost, the run put back: requeues.ts), and every answer
 * and recorded outcome is true (a refused write did not happen, a `lost` run started, a second run never
 * follows a completed one, a recorded claim ran its handler).
 */
export function checkLedger(input: LedgerInput): Verdict {
  const verdict: Verdict = {
    timers: 0,
    runs: input.runs.length,
    ...{ lost: 0, duplicated: 0, allowed: 0, early: 0, stale: 0, wrong: 0, maxLatenessMs: 0 },
    problems: [],
  };
  const seen = new Map<string, number>();
  const note = (kind: keyof Verdict, text: string): void => {
    (verdict[kind] as number)++;
    const shown = seen.get(kind) ?? 0;
    seen.set(kind, shown + 1);
    if (shown < EXAMPLES_PER_KIND) verdict.problems.push(`${kind}: ${text}`);
  };
  const runsByKey = groupBy(input.runs, (run) => run.key);
  for (const [key, writes] of groupBy(input.writes, (write) => write.key)) {
    const schedule = writes.find((write) => write.op === 'schedule')!;
    const cancel = writes.find((write) => write.op === 'cancel');
    const row = input.rows.get(key) ?? null;
    const runs = runsByKey.get(key) ?? [];
    const tombstone = input.tombstones.get(key) ?? null;
    const id = schedule.timer?.id ?? row?.id ?? runs[0]?.id ?? tombstone;
    if (id === null) continue; // refused or unknown, and it did not happen: nothing to check
    verdict.timers++;
    if (schedule.answer === 'refused')
      note(
        'wrong',
        `${key}: schedule refused (${schedule.reason}: ${schedule.message}) but the timer exists`,
      );
    const cancelled = tombstone === id;
    if (cancel && cancel.answer !== 'ok' && cancel.answer !== 'unknown' && cancelled)
      note(
        'wrong',
        `${key}: cancel answered ${cancel.answer} (${cancel.reason ?? ''}) but it cancelled ${id}`,
      );
    const requeues = new Requeues(input.histories.get(key) ?? [], input.leaseMs);
    const ctx: TimerCheck = { key, id, row, runs, input, note, requeues };
    checkRuns(ctx, cancel?.answer === 'ok' ? cancel.answeredAt : undefined, verdict);
    if (!cancelled) checkEnd(ctx);
  }
  return verdict;
}

interface TimerCheck {
  key: string;
  id: string;
  row: Timer | null;
  runs: RunRecord[];
  input: LedgerInput;
  note(kind: keyof Verdict, text: string): void;
  requeues: Requeues;
}

/** Early and stale runs, lateness, and second runs of one (id, version). */
function checkRuns(
  { key, id, row, runs, input, note, requeues }: TimerCheck,
  cancelledAt: number | undefined,
  verdict: Verdict,
): void {
  const atLeastOnce = row?.delivery !== 'at-most-once';
  const starts = runs.filter((run) => run.event === 'started' && run.id === id);
  for (const [version, ofVersion] of groupBy(starts, (run) => run.version)) {
    ofVersion.sort((a, b) => a.runCount - b.runCount);
    const first = ofVersion[0];
    verdict.maxLatenessMs = Math.max(verdict.maxLatenessMs, first.at - first.due);
    for (const run of ofVersion) {
      // Early is a start before the due (every process here shares the machine's clock, Redis's too), or
      // a claim more than the workers' claimAheadMs before it (docs/spec.md §3.2).
      if (run.at < run.due) note('early', `${key} v${version} started at ${run.at} < due ${run.due}`);
      if (claimTime(run) < run.due - DEFAULT_CLAIM_AHEAD_MS)
        note(
          'early',
          `${key} v${version} claimed at ${claimTime(run)}, over ${DEFAULT_CLAIM_AHEAD_MS} ms before due ${run.due}`,
        );
      if (cancelledAt !== undefined && claimTime(run) > cancelledAt)
        note(
          'stale',
          `${key} v${version} claimed at ${claimTime(run)}, after its cancel answered at ${cancelledAt}`,
        );
    }
    for (let n = 1; n < ofVersion.length; n++) {
      const [earlier, later] = [ofVersion[n - 1], ofVersion[n]];
      if (earlier.runCount === later.runCount) {
        note('wrong', `${key} v${version}: one claim (runCount ${later.runCount}) ran twice`);
        continue;
      }
      const finished = runs.some(
        (r) => r.event === 'finished' && r.version === version && r.runCount === earlier.runCount,
      );
      const died = input.killedPids.has(earlier.pid);
      const { putBack, problem } = atLeastOnce
        ? requeues.explain(earlier, later, died)
        : { putBack: undefined, problem: 'at-most-once never runs a run again' };
      const first = `runCount ${earlier.runCount} (pid ${earlier.pid}, ${died ? 'killed' : 'alive'})`;
      const why =
        putBack === undefined
          ? ''
          : `: its lease lost and the run put back ${putBack} ms after its claim (ledger)`;
      note('duplicated', `${key} v${version}: ${first}, then ${later.runCount}${why}`);
      if (problem === undefined) verdict.allowed++;
      else
        note(
          'wrong',
          `${key} v${version} (${row?.delivery ?? '?'}): ran again (runCount ${later.runCount}) after ${
            finished ? 'a run that had finished' : 'a run'
          } on pid ${earlier.pid} (${died ? 'killed' : 'which did not die'}): ${problem}`,
        );
    }
  }
}

/** How a timer ended: it must have ended, its recorded outcome must match its runs, no run may be left behind. */
function checkEnd({ key, id, row, runs, input, note }: TimerCheck): void {
  if (row === null || row.id !== id)
    return note('lost', `${key}: acknowledged ${id}, gone without a recorded end`);
  if (row.status !== 'completed' && row.status !== 'failed')
    return note('lost', `${key}: still ${row.status} (runCount ${row.runCount}) after the settle deadline`);
  const own = runs.filter((run) => run.id === id);
  const started = (runCount: number) =>
    own.some((run) => run.event === 'started' && run.runCount === runCount);
  const workerDied = input.killedPids.size > 0;
  for (let runCount = 1; runCount <= row.runCount; runCount++) {
    if (!started(runCount) && !workerDied)
      note('wrong', `${key}: claim ${runCount} of ${row.runCount} recorded, its handler never started`);
  }
  const last = row.last;
  if (last?.status === 'failed' && last.error?.reason === 'lost') {
    if (row.delivery !== 'at-most-once') note('wrong', `${key}: at-least-once run recorded lost`);
    else if (!started(row.runCount) && !workerDied)
      note('wrong', `${key}: recorded lost, but that run never started`);
  } else if (last?.status === 'failed') {
    note(
      'wrong',
      `${key}: ended failed (${last.error?.message}) though its handler never throws unless aborted`,
    );
  } else if (
    row.handler === 'slow' &&
    !own.some((run) => run.event === 'finished' && run.runCount === row.runCount)
  ) {
    note('wrong', `${key}: recorded ok, but run ${row.runCount} never finished`);
  }
  if (row.delivery === 'at-most-once') return;
  // An at-least-once run that started and never finished must have run again.
  for (const run of own.filter((r) => r.event === 'started' && r.runCount < row.runCount)) {
    const finished = own.some((r) => r.event === 'finished' && r.runCount === run.runCount);
    const again = own.some(
      (r) => r.event === 'started' && r.version === run.version && r.runCount > run.runCount,
    );
    if (row.handler === 'slow' && !finished && !again)
      note(
        'lost',
        `${key} v${run.version}: run ${run.runCount} (pid ${run.pid}) never finished and never ran again`,
      );
  }
}

function groupBy<T, K>(items: T[], keyOf: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) groups.set(keyOf(item), [...(groups.get(keyOf(item)) ?? []), item]);
  return groups;
}

import type { LedgerEntry, Timer } from '@sundial/core';
import type { RunRecord } from '@sundial/testing/harness';
import { checkLedger, type LedgerInput, type Verdict } from './ledger';

/** The workers' lease in these cases, as the chaos cluster's. */
const LEASE_MS = 4_000;
const KEY = 'chaos:1';
const CLAIMED = 1_000_000;
const LIVE = 101;
const OTHER = 202;

/** A 2.5 s one-shot of `delivery` that ended completed after `runCount` claims. */
function row(delivery: 'at-least-once' | 'at-most-once', runCount: number): Timer {
  const fields = { key: KEY, id: 'id1', handler: 'slow', status: 'completed', delivery, runCount };
  return { ...fields, last: { started: 0, ended: 1, status: 'ok' } } as unknown as Timer;
}

/** Run `runCount` of v1 started on `pid`, claimed at `claimedAt` (and finished, for the last). */
function run(runCount: number, pid: number, claimedAt: number, finished = false): RunRecord[] {
  const started: RunRecord = {
    ...{ event: 'started', id: 'id1', key: KEY, version: 1, due: CLAIMED, runCount },
    ...{ at: claimedAt, claimedAt, pid },
  };
  return finished ? [started, { ...started, event: 'finished', at: claimedAt + 2_500 }] : [started];
}

/** The ledger entry a reconcile pass or a claim writes when it puts a run back (`requeued`). */
function requeued(at: number, pid: number, version = 1): LedgerEntry {
  return {
    ...{ at: new Date(at).toISOString(), event: 'lost', version, reason: 'requeued' },
    workerId: `vm-${pid}-0a1b2c3d`,
  };
}

function verdict(input: {
  delivery?: 'at-least-once' | 'at-most-once';
  runs: RunRecord[];
  history: LedgerEntry[];
  killed?: number[];
}): Verdict {
  const runCount = Math.max(...input.runs.map((r) => r.runCount));
  const ledger: LedgerInput = {
    writes: [{ op: 'schedule', key: KEY, via: 'client', answer: 'ok', sentAt: 0, answeredAt: 1 }],
    runs: input.runs,
    rows: new Map([[KEY, row(input.delivery ?? 'at-least-once', runCount)]]),
    tombstones: new Map([[KEY, null]]),
    histories: new Map([[KEY, input.history]]),
    leaseMs: LEASE_MS,
    killedPids: new Set(input.killed ?? []),
  };
  return checkLedger(ledger);
}

const summary = ({ duplicated, allowed, wrong }: Verdict) => ({ duplicated, allowed, wrong });

/**
 * test/chaos/ledger.ts: a second run of one `(id, version)` is allowed only where the product's own record
 * says why — its ledger's `lost` entry, reason `requeued`, naming the first run's worker, after that run's
 * lease could run out (docs/spec.md §3.8). Before, a re-run was allowed whenever the first run's worker
 * was killed or the scenario could freeze Redis past a lease, and called wrong otherwise: a live worker
 * starved of CPU past its lease on a loaded host (the fast subset at load 15–17) failed the suite though
 * the product recorded exactly that, and a re-run after a killed worker passed with no record at all.
 */
describe('the chaos ledger: a run again is allowed only where the ledger says why', () => {
  it("allows a live worker's run again when its ledger says the lease was lost after it could run out", () => {
    const runs = [...run(1, LIVE, CLAIMED), ...run(2, OTHER, CLAIMED + 5_000, true)];
    const found = verdict({ runs, history: [requeued(CLAIMED + 4_300, LIVE)] });
    expect(summary(found)).toEqual({ duplicated: 1, allowed: 1, wrong: 0 });
    expect(found.problems).toEqual([
      'duplicated: chaos:1 v1: runCount 1 (pid 101, alive), then 2: its lease lost and the run put back 4300 ms after its claim (ledger)',
    ]);
  });

  it.each([
    ['no entry', [], /records no lease of that run lost/],
    ['an entry naming another worker', [requeued(CLAIMED + 4_300, OTHER)], /records no lease/],
    ['an entry of another version', [requeued(CLAIMED + 4_300, LIVE, 2)], /records no lease/],
    ['an entry after the run again', [requeued(CLAIMED + 6_000, LIVE)], /records no lease/],
    [
      'an entry before the lease could run out',
      [requeued(CLAIMED + 3_900, LIVE)],
      /lease was lost 3900 ms after its claim: before a 4000 ms lease/,
    ],
  ])("calls a live worker's run again wrong with %s", (_, history, problem) => {
    const runs = [...run(1, LIVE, CLAIMED), ...run(2, OTHER, CLAIMED + 5_000, true)];
    const found = verdict({ runs, history });
    expect(summary(found)).toEqual({ duplicated: 1, allowed: 0, wrong: 1 });
    expect(found.problems.find((text) => text.startsWith('wrong:'))).toMatch(problem);
    expect(found.problems.join('\n')).toMatch(/on pid 101 \(which did not die\)/);
  });

  it("needs the record for a killed worker's run too; a worker stopped may hand it back before its lease ends", () => {
    const runs = [...run(1, LIVE, CLAIMED), ...run(2, OTHER, CLAIMED + 1_000, true)];
    expect(summary(verdict({ runs, history: [], killed: [LIVE] }))).toEqual({
      duplicated: 1,
      allowed: 0,
      wrong: 1,
    });
    const handedBack = [requeued(CLAIMED + 500, LIVE)];
    expect(summary(verdict({ runs, history: handedBack, killed: [LIVE] }))).toEqual({
      duplicated: 1,
      allowed: 1,
      wrong: 0,
    });
  });

  it('needs one put-back per run again', () => {
    const runs = [
      ...run(1, LIVE, CLAIMED),
      ...run(2, LIVE, CLAIMED + 5_000),
      ...run(3, OTHER, CLAIMED + 10_000, true),
    ];
    const once = [requeued(CLAIMED + 4_500, LIVE)];
    expect(summary(verdict({ runs, history: once }))).toEqual({ duplicated: 2, allowed: 1, wrong: 1 });
    const twice = [requeued(CLAIMED + 9_500, LIVE), ...once];
    expect(summary(verdict({ runs, history: twice }))).toEqual({ duplicated: 2, allowed: 2, wrong: 0 });
  });

  it('never allows an at-most-once run again, whatever the ledger says', () => {
    const runs = [...run(1, LIVE, CLAIMED), ...run(2, OTHER, CLAIMED + 5_000, true)];
    const found = verdict({ delivery: 'at-most-once', runs, history: [requeued(CLAIMED + 4_300, LIVE)] });
    expect(summary(found)).toEqual({ duplicated: 1, allowed: 0, wrong: 1 });
  });
});

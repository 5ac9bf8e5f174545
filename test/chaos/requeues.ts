import type { LedgerEntry } from '@sundial/core';
import type { RunRecord } from '@sundial/testing/harness';

/**
 * The product's own record of why an at-least-once `(id, version)` ran again (docs/spec.md §3.8, §3.9): a
 * run's lease ran out — its worker died, handed the run back at its shutdown, or lived on but renewed
 * nothing for a lease (stopped, starved of CPU on a loaded host, cut off from Redis) — and the reconciler,
 * or the claim of a redelivered fire job, put the run back: a ledger entry `lost`, reason `requeued`, of
 * that version, naming the worker that held it (`<host>-<pid>-<random>`). A second run with no such entry
 * is one the product cannot explain; one whose entry came before its lease could have run out (a worker
 * that did not hand it back) says something untrue.
 */
export class Requeues {
  /** entries already matched to a second run: each put-back explains one */
  private readonly used = new Set<LedgerEntry>();
  private readonly entries: LedgerEntry[];

  /** `history`: the key's ledger as `history` reads it; `leaseMs`: the workers' lease */
  constructor(
    history: LedgerEntry[],
    private readonly leaseMs: number,
  ) {
    this.entries = history
      .filter((entry) => entry.event === 'lost' && entry.reason === 'requeued')
      .sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
  }

  /**
   * Why `later` ran after `earlier` (same id and version, a higher runCount): `putBack`, the ms from
   * earlier's claim to the ledger's put-back that explains it (each put-back explains one run again);
   * `problem`, what is wrong when none does or the one found is untrue. `handedBack`: earlier's worker was
   * stopped by the scenario (a SIGTERM's hand-back expires its leases at once).
   */
  explain(earlier: RunRecord, later: RunRecord, handedBack: boolean): { putBack?: number; problem?: string } {
    const claimed = claimTime(earlier);
    const entry = this.entries.find(
      (candidate) =>
        !this.used.has(candidate) &&
        candidate.version === earlier.version &&
        pidOf(candidate.workerId) === earlier.pid &&
        Date.parse(candidate.at) >= claimed &&
        Date.parse(candidate.at) <= claimTime(later),
    );
    if (!entry)
      return {
        problem: `its ledger records no lease of that run lost (no 'lost' entry, reason 'requeued', of v${earlier.version} naming pid ${earlier.pid} between the two claims)`,
      };
    this.used.add(entry);
    const putBack = Date.parse(entry.at) - claimed;
    if (!handedBack && putBack < this.leaseMs)
      return {
        putBack,
        problem: `its ledger says its lease was lost ${putBack} ms after its claim: before a ${this.leaseMs} ms lease could run out`,
      };
    return { putBack };
  }
}

/** The pid in a worker id as TimerRunner makes it (`<host>-<pid>-<8 hex>`); undefined for any other. */
export function pidOf(workerId: string | undefined): number | undefined {
  const match = /-(\d+)-[0-9a-f]{8}$/.exec(workerId ?? '');
  return match ? Number(match[1]) : undefined;
}

/** When the claim took the run (Redis clock); the handler's own clock when the record lacks it. */
export function claimTime(run: RunRecord): number {
  return run.claimedAt ?? run.at;
}

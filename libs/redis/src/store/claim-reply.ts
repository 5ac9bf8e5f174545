import type { ClaimCode, StaleReason } from './replies';
import type { RowFields } from './row';

export type ClaimResult =
  | {
      kind: 'claimed';
      mode: 'held' | 'free';
      due: number;
      /**
       * ms from the claim's Redis TIME to the due (0 once due): a claim sent up to `aheadMs` before the
       * due is answered at once, and the handler starts this long after the answer arrived
       */
      leftMs: number;
      fields: RowFields;
      rerun: boolean;
      /** a held one-shot's kept ledger entries as claim.lua left them on its row (`lq`; '' for none) */
      kept?: string;
      /**
       * a held run taken over from a worker whose lease had expired (at-least-once, the claim of a
       * redelivered fire job): put back to run again, counted as the reconciler counts its requeues
       */
      requeued?: boolean;
    }
  | { kind: 'early'; waitMs: number }
  | { kind: 'check'; due: number; fields: RowFields }
  | { kind: 'stale'; reason: StaleReason }
  | { kind: 'lost'; fields: RowFields }
  /**
   * not claimed: its handler is one this worker lacks and a live worker of the partition has (claim.lua
   * ARGV[4]); `jobId` names the fire job to add for it ('' when none is needed)
   */
  | { kind: 'passed'; jobId: string };

export type RawClaimReply = [ClaimCode, ...string[]];

/**
 * A claimed run's claim instant by Redis's clock (claim.lua's `now`, where its lease starts): its `lf`,
 * unless it was claimed ahead of its due — `lf` is then the due, and the claim ⌈leftMs⌉ before it (claim.lua
 * sends leftMs in µs from `TIME`, and its `now` is that time in whole ms).
 */
export function claimInstant(claimed: { due: number; leftMs: number; fields: RowFields }): number {
  return claimed.leftMs > 0 ? claimed.due - Math.ceil(claimed.leftMs) : Number(claimed.fields.lf);
}

/** What the worker knows of a timer it claims: its ref, and itself. */
export interface ClaimedBy {
  id: string;
  key: string;
  version: number;
  workerId: string;
}

/**
 * claim.lua's reply per timer. A claimed row comes without what the worker has or derives (claim.lua
 * `claimed_reply`): its key and version (`rv`) from the ref; `l` — this claim's, started at `lf` and
 * running — when the reply leaves it out; a held run's id (its ref's: a claim holds the same id), status
 * (`running`), runCount (`hc` = `rc`) and lease owner (`lw`), and its `d` when that is its due (no
 * `tg`). (`rv` and `hc` are stored only for a timer that does not await its task.) The lease's end and
 * token and the job id are not put back: nothing reads them. Every other field comes as stored, an
 * optional one (a policy, the timeout `to` that invokeHandler applies) only when the row has it. A held
 * one-shot's kept ledger entries come as they are (`kept`), for its completion to send back (claimCopy).
 */
export function parseClaimReply(reply: RawClaimReply, by: ClaimedBy): ClaimResult {
  // indexed, not destructured with a rest: a claim parses one reply per timer
  const code = reply[0];
  switch (code) {
    case 'held':
    case 'free': {
      const fields = JSON.parse(reply[3]) as RowFields;
      fields.key = by.key;
      fields.rv = String(by.version);
      fields.l ??= `{"started":${fields.lf},"status":"running"}`;
      if (code === 'held') {
        fields.id = by.id;
        fields.d ??= reply[1];
        fields.s = 'running';
        fields.hc = fields.rc;
        fields.lw = by.workerId;
      }
      const due = Number(reply[1]);
      const leftMs = Number(reply[2]) / 1000; // sent in µs
      // a held one-shot's 5th element is its kept entries (`lq`), a free run's says 'rerun'; a held run's
      // 6th says 'requeued' when it took over a dead worker's run
      if (code === 'held') {
        const requeued = reply[5] === 'requeued';
        return { kind: 'claimed', mode: code, due, leftMs, fields, rerun: false, kept: reply[4], requeued };
      }
      return { kind: 'claimed', mode: code, due, leftMs, fields, rerun: reply[4] === 'rerun' };
    }
    case 'early':
      return { kind: 'early', waitMs: Number(reply[1]) };
    case 'check':
      return { kind: 'check', due: Number(reply[1]), fields: JSON.parse(reply[2]) as RowFields };
    case 'lost':
      return { kind: 'lost', fields: JSON.parse(reply[1]) as RowFields };
    case 'passed':
      return { kind: 'passed', jobId: reply[1] };
    default:
      return { kind: 'stale', reason: reply[1] as StaleReason };
  }
}

import { lateSlot, type SundialLogger } from '@sundial/core';
import type { ClaimResult } from '../store/claim-reply';
import type { FireCommands, TimerRef } from '../store/fire-commands';
import { slotTimerOf } from '../store/row';
import { cronDetach } from './completion';
import type { ActiveRun } from './lease-keeper';
import type { RunFields, RunReports } from './run-reports';
import type { Claimed } from './run-start';

/** What the slot decisions a claim hands to its worker need (docs/spec.md §3.3a, §3.3c). */
export interface ClaimSlotContext {
  commands: FireCommands;
  workerId: string;
  reports: RunReports;
  logger: SundialLogger;
}

/**
 * A cron whose slots do not wait for its runs (overlap 'allow' / 'cancel-other'): claim.lua held the run, as
 * its next slot is cron math; detach.lua arms that slot and lets the run go on free. Done before the run is
 * leased, so its lease is renewed under the name it ends with. Not detached: it stays held. Null when the
 * run has nothing to detach (most runs): nothing to wait for, so the handler starts in the same turn.
 */
export function detachAtClaim(
  context: ClaimSlotContext,
  run: ActiveRun,
  claimed: Claimed,
  fields: RunFields,
): Promise<void> | null {
  const follow = claimed.mode === 'held' ? cronDetach(claimed.fields, claimed.due) : null;
  return follow && detach(context, run, follow, fields);
}

async function detach(
  context: ClaimSlotContext,
  run: ActiveRun,
  follow: { next: number; missed: number },
  fields: RunFields,
): Promise<void> {
  try {
    if (await context.commands.detach(run.partition, context.workerId, run, follow.next, follow.missed)) {
      run.mode = 'free';
      context.reports.skips({ missed: follow.missed, overlap: 0 }, fields);
    }
  } catch (error) {
    // It runs held; its completion arms the next slot, as overlap 'skip' would.
    context.logger.error(`Sundial could not arm the next slot at claim: ${(error as Error).message}`, fields);
  }
}

/**
 * A slot claim.lua found late under a slot policy (docs/spec.md §3.3c): core's lateSlot says whether it
 * runs. Returns the ref to claim again when it does; otherwise passes it (pass-late.lua) and returns null.
 */
export async function passIfLate(
  context: ClaimSlotContext,
  partition: number,
  check: Extract<ClaimResult, { kind: 'check' }>,
  ref: TimerRef,
  now: number,
): Promise<TimerRef | null> {
  const { fields } = check;
  // By when it runs: a claim up to claimAheadMs before its due starts it at the due. (A row stored with a
  // jitter longer than its cron's gap, §3.3c, has dues past their successor: passed, as `next` says.)
  const step = lateSlot(slotTimerOf(fields), Number(fields.ds ?? check.due), Math.max(now, check.due));
  if (!step) return ref;
  const passed = await context.commands.passLate(partition, ref, step);
  const subject = { key: ref.key, id: ref.id, version: Number(ref.version), partition, handler: fields.h };
  if (passed) context.reports.skips(step, subject);
  return null;
}

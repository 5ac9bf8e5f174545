import type { LedgerEntry, TimerHandler } from '@sundial/core';
import { waitFor } from '@sundial/testing/harness';
import { delay, seeded, useFirePath, work } from './fire-fixture';

const fire = useFirePath();

const TIMERS = 200;
/** the timers fall due over this span, so claims and the calls racing them interleave */
const SPREAD_MS = 400;
/** each timer's cancel or reschedule is sent this close to its due, before or after it */
const AIM_MS = 15;
/** the reschedules sure to come before their claim are sent this long before their due */
const EARLY_MS = 500;
/** a reschedule moves its timer this far ahead: its new version runs in the test too */
const MOVE_MS = 100;
/** how long a run that nothing aborts goes on */
const HOLD_MS = 1_500;

interface Run {
  key: string;
  version: number;
  aborted: boolean;
}

interface Call {
  key: string;
  kind: 'cancel' | 'reschedule';
  /** the version the call superseded, when it answered that it did */
  superseded?: number;
  refused?: string;
}

/** What replaced `version` of a key: a cancel or reschedule entry whose version is the next one. */
function supersedingIndex(history: LedgerEntry[], version: number): number {
  return history.findIndex(
    (entry) =>
      entry.version === version + 1 && (entry.event === 'cancelled' || entry.event === 'rescheduled'),
  );
}

/**
 * The churn bench's question as an invariant, checked by versions and Redis's own order (the ledger),
 * not by wall clocks: one-shots falling due while a cancel or reschedule of each is sent a few ms before
 * or after its due. A run may only exist for a version claimed before any call replaced it; a cancel that
 * came after the claim aborts the run (docs/spec.md §3.2, §3.4, §3.5).
 */
describe('fire path: cancel and reschedule racing due one-shots', () => {
  it.each([1, 2, 3])(
    'no run of a replaced version, every run cancelled after its claim aborted (seed %i)',
    async (seed) => {
      const random = seeded(seed);
      const cluster = await fire.cluster();
      const runs: Run[] = [];
      let ended = 0;
      const handler: TimerHandler = async (_payload, ctx) => {
        const run = { key: ctx.key, version: ctx.version, aborted: false };
        runs.push(run);
        try {
          // (a signal aborted before the handler started fires no event: read first)
          if (ctx.signal.aborted) run.aborted = true;
          else await work(ctx.signal, HOLD_MS).catch(() => (run.aborted = true));
        } finally {
          ended++;
        }
      };
      await cluster.dispatcher();
      await cluster.runner({ h: handler }, { workerId: 'w1' });
      await cluster.runner({ h: handler }, { workerId: 'w2' });
      const firstDue = (await cluster.redisNow()) + 1_500;
      const timers = await cluster.timers.scheduleMany(
        Array.from({ length: TIMERS }, (_, i) => ({
          key: `k${i}`,
          handler: 'h',
          at: firstDue + Math.floor((i * SPREAD_MS) / TIMERS),
        })),
      );

      const calls: Call[] = [];
      const sent = timers.map(async (timer, i) => {
        const call: Call = { key: timer.key, kind: i % 2 === 0 ? 'cancel' : 'reschedule' };
        calls.push(call);
        if (i % 10 === 0) {
          // Both sides of the race are reached whatever the host's load (a starved worker claims later
          // than any aim near the due): a tenth of the cancels wait for their run to start, a tenth of
          // the reschedules are sent well before their due.
          await waitFor(() => runs.some((run) => run.key === timer.key), { what: `${timer.key}'s run` });
        } else if (i % 10 === 5) await delay(Math.max(0, timer.dueAt - EARLY_MS - Date.now()));
        else await delay(Math.max(0, timer.dueAt + (random() * 2 - 1) * AIM_MS - Date.now()));
        try {
          if (call.kind === 'cancel') {
            if (await cluster.timers.cancel(timer.key)) call.superseded = timer.version;
          } else {
            const moved = await cluster.timers.reschedule(timer.key, { delay: MOVE_MS });
            call.superseded = moved.version - 1;
          }
        } catch (error) {
          call.refused = (error as { reason?: string }).reason ?? String(error);
        }
      });
      await Promise.all(sent);
      // settled: every timer ran or was cancelled, and every run ended (on a timeout the checks below say what did not happen)
      await waitFor(async () => ended === runs.length && (await cluster.timers.list()).items.length === 0, {
        what: 'every timer settled',
      }).catch(() => undefined);

      const runOf = new Map(runs.map((run) => [`${run.key}@${run.version}`, run]));
      expect(runOf.size).toBe(runs.length); // nothing ran twice
      let cancelledWhileRunning = 0;
      let supersededBeforeClaim = 0;
      for (const call of calls) {
        const run = runOf.get(`${call.key}@1`);
        if (call.kind === 'reschedule') {
          // a reschedule is refused while its run goes on: one that went through leaves no run of the old version
          if (call.superseded !== undefined) expect({ call, run }).toEqual({ call, run: undefined });
          else
            expect({ call, run }).toEqual({ call: { ...call, refused: 'inactive' }, run: expect.anything() });
        }
        if (call.superseded === undefined) continue;
        if (!run) {
          supersededBeforeClaim++;
          continue;
        }
        // a run of a cancelled version: Redis claimed it before the cancel, and the cancel aborted it
        const history = await waitFor(
          async () => {
            const entries = await cluster.timers.history(call.key);
            return entries.some((entry) => entry.event === 'stale') ? entries : undefined;
          },
          { what: `${call.key}'s stale completion` },
        );
        const claimed = history.findIndex((entry) => entry.event === 'claimed' && entry.version === 1);
        const cancelled = supersedingIndex(history, 1);
        expect({ key: call.key, claimedBeforeCancel: cancelled >= 0 && claimed > cancelled }).toEqual({
          key: call.key,
          claimedBeforeCancel: true,
        });
        expect(run).toEqual({ key: call.key, version: 1, aborted: true });
        cancelledWhileRunning++;
      }
      // each reschedule's new version ran once
      const moved = calls.filter((call) => call.kind === 'reschedule' && call.superseded !== undefined);
      expect(
        runs
          .filter((run) => run.version === 2)
          .map((run) => run.key)
          .sort(),
      ).toEqual(moved.map((call) => call.key).sort());
      // both sides of the race were reached
      expect(cancelledWhileRunning).toBeGreaterThan(0);
      expect(supersededBeforeClaim).toBeGreaterThan(0);
    },
  );
});

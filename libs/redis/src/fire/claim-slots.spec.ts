import { jitterOf, silentLogger } from '@sundial/core';
import type { FireCommands } from '../store/fire-commands';
import type { RowFields } from '../store/row';
import { passIfLate } from './claim-slots';
import type { RunReports } from './run-reports';

/** The first whole-second slot from 2026-12-07 whose jitter (1.5 s, key 'old') `fits`. */
function slotWhere(fits: (jitter: number) => boolean): number {
  let slot = 1_796_635_000_000;
  while (!fits(jitterOf('old', slot, 1500))) slot += 1000;
  return slot;
}

/** passIfLate on a per-second cron row with a 1.5 s jitter, `catchup: 'skip'`, its slot claimed at `now(due)`. */
async function checked(slot: number, now: (due: number) => number) {
  const due = slot + jitterOf('old', slot, 1500);
  const fields = { key: 'old', id: '1p0', v: '1', k: 'cron', cr: '* * * * * *', tz: 'UTC', sa: '0' };
  const row = { ...fields, cu: 's', jt: '1500', ds: String(slot), d: String(due), h: 'h' } as RowFields;
  const passLate = jest.fn(async () => true);
  const skips = jest.fn();
  const context = {
    commands: { passLate } as unknown as FireCommands,
    workerId: 'w',
    reports: { skips } as unknown as RunReports,
    logger: silentLogger,
  };
  const ref = { id: '1p0', key: 'old', version: 1, due };
  const on = await passIfLate(context, 0, { kind: 'check', due, fields: row }, ref, now(due));
  return { on, ref, passLate, skips };
}

/**
 * docs/spec.md §3.3c, §3.9: under `catchup: 'skip'` a slot whose due comes after its successor (a row stored
 * with a jitter longer than its cron's gap) is passed, as `next` says — also when its claim went up to
 * `claimAheadMs` (at most 50 ms) before that due, so before the successor came: it would start after it.
 */
describe('passIfLate: a skip slot claimed ahead of its due', () => {
  it('is passed when its due comes after its successor, however early the claim', async () => {
    const slot = slotWhere((jitter) => jitter >= 1000 && jitter < 1050);
    const { on, passLate, skips } = await checked(slot, (due) => due - 50);
    expect(on).toBeNull();
    expect(passLate).toHaveBeenCalledTimes(1);
    // the slot and its successor, both gone by the due
    expect(skips).toHaveBeenCalledWith(expect.objectContaining({ missed: 2 }), expect.anything());
  });

  it('runs when its due comes before its successor, claimed ahead or not', async () => {
    const slot = slotWhere((jitter) => jitter < 950);
    for (const ahead of [50, 0]) {
      const { on, ref, passLate } = await checked(slot, (due) => due - ahead);
      expect(on).toBe(ref);
      expect(passLate).not.toHaveBeenCalled();
    }
  });
});

import { cronFollowUp } from './completion';

describe('cronFollowUp', () => {
  const slot = Date.UTC(2026, 11, 6, 5, 0, 0);
  /** An every-second cron's held run, claimed ahead and started at its due (`lf`, by the claim's bound). */
  const fields = {
    key: 'cron:digest',
    k: 'cron',
    cr: '* * * * * *',
    tz: 'UTC',
    sa: '0',
    d: `${slot}`,
    lf: `${slot}`,
    rc: '3',
  };

  it('arms the slot after the one run, even when the worker clock says the run ended before its due', () => {
    // The worker's ClusterClock estimate 40 ms behind the claim's bound: a fast handler "ended" at slot - 39.
    expect(cronFollowUp(fields, slot, slot - 39)).toEqual({ cronNext: slot + 1000, missed: 0, overlap: 0 });
  });

  it('counts the slots that came while a run went on from when it ended', () => {
    expect(cronFollowUp(fields, slot, slot + 2500)).toEqual({ cronNext: slot + 3000, missed: 0, overlap: 2 });
  });

  it('a run that started late skips the slots it missed, by its start', () => {
    const late = { ...fields, lf: `${slot + 1500}` };
    // ended by the estimate before it started: still after its start
    expect(cronFollowUp(late, slot, slot + 1400)).toEqual({ cronNext: slot + 2000, missed: 1, overlap: 0 });
  });

  it('steps a timer with a slot policy from the same instant', () => {
    const policy = { ...fields, cu: 's' };
    expect(cronFollowUp(policy, slot, slot - 39).cronNext).toBe(slot + 1000);
  });
});

/**
 * docs/spec.md §3.3 "Slots gone past" on every backend: a cron counts every slot it went past, however
 * many — its `skipped` event, its ledger entry and (Redis) sundial_runs_skipped_total carry one count.
 * They were counted up to 1000 per run: a per-minute cron down for a day said 1000 slots, not 1439.
 */
import { BACKENDS, useBackend } from './backends';

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
const minutely = { handler: 'work', cron: '* * * * *', tz: 'UTC', maxRuns: 2 } as const;

describe.each(BACKENDS)('%s backend: a cron down for a day', (name) => {
  const backend = useBackend(name);

  it.concurrent(
    "catchup 'once': its late run counts every minute it missed, in the event and the ledger",
    async () => {
      const h = await backend.open();
      await h.timers.schedule({ key: 'once', ...minutely });
      await h.downFor(DAY);
      const skipped = await h.event({ type: 'skipped', key: 'once', reason: 'missed' });
      const [run] = h.runs;
      // the slots after the run's due up to its start: a whole day of minutes, less the one that ran
      const missed = Math.floor((run.at - run.due) / MINUTE);
      expect(missed).toBeGreaterThanOrEqual(24 * 60 - 1);
      expect(skipped.count).toBe(missed);
      const entries = await h.until(async () => {
        const history = await h.timers.history('once');
        return history.find((entry) => entry.event === 'skipped' && entry.reason === 'missed');
      });
      expect(entries).toMatchObject({ reason: 'missed', count: missed });
    },
  );

  it.concurrent("catchup 'skip': every minute of the day counts missed, none runs", async () => {
    const h = await backend.open();
    await h.timers.schedule({ key: 'skip', ...minutely, catchup: 'skip' });
    await h.downFor(DAY);
    const skipped = await h.event({ type: 'skipped', key: 'skip', reason: 'missed' });
    // the first slot to the last before the pass: 1440 or 1441, by where in its minute the pass came
    expect(skipped.count).toBeGreaterThanOrEqual(24 * 60);
    expect(skipped.count).toBeLessThanOrEqual(24 * 60 + 1);
    expect(h.runs).toHaveLength(0);
  });
});

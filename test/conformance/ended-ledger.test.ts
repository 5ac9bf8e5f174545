/**
 * docs/spec.md §3.9 on every backend: a run that ends its timer unasked (its cron's next slot is after
 * `endAt`, §3.3c) says so in its ledger entry, failed as well as completed. A completed entry's `reason`
 * is that end; a failed one's `reason` is its error's, so the end is its `ended` — the same values
 * (`ended`, `no-next-slot`), as the `failed` event's `reason` has them.
 *
 * The tests run side by side (`it.concurrent`), each on its own timers, dispatcher and runner.
 */
import type { LedgerEntry, TimerSpec } from '@sundial/core';
import { BACKENDS, type Harness, useBackend } from './backends';

// deadline (backend time: virtual on the engine, real on Redis): each wait is left as soon as its outcome shows
const WITHIN = { within: 12_000 };
const EVERY_SECOND = { cron: '* * * * * *', tz: 'UTC' } as const;

/** A cron on every whole second whose endAt comes 1.5 s after its first slot: its run there (or the one before) ends it. */
async function endingCron(h: Harness, spec: Omit<TimerSpec, 'handler' | 'cron' | 'tz'>): Promise<void> {
  const now = await h.now();
  const endAt = Math.floor(now / 1_000) * 1_000 + 2_500;
  await h.timers.schedule({ handler: 'work', ...EVERY_SECOND, endAt, ...spec });
}

/** The ledger of `key` once its newest entry is a run's outcome that ended the timer (`completed` or `failed`). */
async function endedHistory(h: Harness, key: string, event: LedgerEntry['event']): Promise<LedgerEntry[]> {
  await h.until(
    async () => {
      const timer = await h.timers.get(key);
      return (timer === null || timer.status === 'completed' || timer.status === 'failed') && true;
    },
    { ...WITHIN, what: `${key} to end` },
  );
  return h.until(
    async () => {
      const entries = await h.timers.history(key);
      return entries[0]?.event === event && entries;
    },
    { ...WITHIN, what: `a ${event} entry for ${key}` },
  );
}

/** The outcomes of the runs, oldest first, with the fields that say what happened. */
const outcomes = (entries: LedgerEntry[]) =>
  [...entries]
    .reverse()
    .filter((entry) => entry.event === 'completed' || entry.event === 'failed')
    .map(({ event, reason, message, ended }) => ({ event, reason, message, ended }));

describe.each(BACKENDS)('%s backend: a run that ends its timer says so in the ledger', (name) => {
  const backend = useBackend(name);

  it.concurrent.each([
    ['kept', false],
    ['removed', true],
  ])(
    'a failed run whose endAt ends its cron (%s): its entry has its error and ended',
    async (_case, removeOnComplete) => {
      const h = await backend.open();
      await endingCron(h, { key: 'fe', payload: { fail: 'down', reason: 'quota' }, removeOnComplete });
      const entries = await endedHistory(h, 'fe', 'failed');
      const runs = outcomes(entries);
      const failed = { event: 'failed', reason: 'quota', message: 'down', ended: undefined };
      // every run failed; only the last ended the timer, and its entry says both
      expect(runs).toEqual([...runs.slice(1).map(() => failed), { ...failed, ended: 'ended' }]);
      expect(entries[0]).toMatchObject({ event: 'failed', attempt: 1, due: expect.any(String) });
      const timer = await h.timers.get('fe');
      if (removeOnComplete) expect(timer).toBeNull();
      else expect(timer).toMatchObject({ status: 'failed', last: { error: { reason: 'quota' } } });
    },
  );

  it.concurrent('a failed run with no error reason: its reason stays unset, ended says the end', async () => {
    const h = await backend.open();
    await endingCron(h, { key: 'fp', payload: { fail: 'down' }, removeOnComplete: false });
    const [last] = await endedHistory(h, 'fp', 'failed');
    expect(last).toMatchObject({ event: 'failed', message: 'down', ended: 'ended' });
    expect(last.reason).toBeUndefined();
  });

  it.concurrent('a completed run that ends its cron: reason ended, as before (no ended field)', async () => {
    const h = await backend.open();
    await endingCron(h, { key: 'ok', removeOnComplete: false });
    const [last] = await endedHistory(h, 'ok', 'completed');
    expect(last).toMatchObject({ event: 'completed', reason: 'ended' });
    expect(last).not.toHaveProperty('ended');
    expect(last).not.toHaveProperty('message');
  });
});

/**
 * docs/spec.md §2, §3.4 on every backend: a write that acts on a live timer (pause, resume, trigger,
 * reschedule, backfill) meeting a timer that ended and was kept (`removeOnComplete: false`) is refused
 * `not-found` (404 over HTTP) naming how it ended — `detail.status` completed or failed, a message and a
 * fix that say so — where both backends answered "No live timer", as for a key with no row. The refusal
 * changes nothing, and a retry with the same requestId meets it again.
 */
import { BACKENDS, type Harness, useBackend } from './backends';

const FIX =
  'Schedule it again to run it: schedule(spec). A new timer under the key replaces the row it ended with;';

/** Every write refused on `key`, by its operation name. */
function writes(h: Harness, key: string, now: number): [string, () => Promise<unknown>][] {
  return [
    ['pause', () => h.timers.pause(key)],
    ['resume', () => h.timers.resume(key, { requestId: `resume-${key}` })],
    ['trigger', () => h.timers.trigger(key, { requestId: `trigger-${key}` })],
    ['reschedule', () => h.timers.reschedule(key, { delay: '1h' })],
    ['backfill', () => h.timers.backfill(key, { from: now - 60_000, to: now - 1 })],
  ];
}

describe.each(BACKENDS)('%s backend: writes on a kept timer that ended', (name) => {
  const backend = useBackend(name);

  it('are refused not-found with the status it ended with, and change nothing', async () => {
    const h = await backend.open();
    const kept = { handler: 'work', removeOnComplete: false } as const;
    await h.timers.schedule({ key: 'done', ...kept, every: 100, maxRuns: 1 });
    await h.timers.schedule({ key: 'bad', ...kept, delay: 10, payload: { fail: 'down' } });
    await h.until(
      async () =>
        (await h.timers.get('done'))?.status === 'completed' &&
        (await h.timers.get('bad'))?.status === 'failed',
      { what: 'done completed and bad failed' },
    );
    const before = [await h.timers.get('done'), await h.timers.get('bad')];
    const now = await h.now();
    for (const [key, status] of [
      ['done', 'completed'],
      ['bad', 'failed'],
    ] as const) {
      for (const [operation, call] of writes(h, key, now)) {
        // twice: a refusal is not kept for a requestId, its retry meets the row again
        for (const _attempt of ['first', 'retry']) {
          await expect(call()).rejects.toMatchObject({
            reason: 'not-found',
            field: 'key',
            message: `Cannot ${operation} timer "${key}": it has ended (${status}); its row is kept, but no live timer is there to ${operation}.`,
            fix: `${FIX} history("${key}") shows its runs.`,
            detail: { status },
          });
        }
      }
    }
    expect([await h.timers.get('done'), await h.timers.get('bad')]).toEqual(before);
    expect(h.eventsOf('scheduled').filter((event) => event.reason !== undefined)).toEqual([]);
  });

  it('a key with no row at all is still refused without a status', async () => {
    const h = await backend.open();
    const refusal = await h.timers.pause('never').catch((error: unknown) => error);
    expect(refusal).toMatchObject({
      reason: 'not-found',
      field: 'key',
      message: 'No live timer under key "never".',
    });
    expect((refusal as { detail?: unknown }).detail).toBeUndefined();
  });
});

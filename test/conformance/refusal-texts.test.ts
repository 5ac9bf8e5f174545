/**
 * docs/spec.md §3.4, §3.3c on every backend: a running or paused timer refuses reschedule, pause, trigger
 * and backfill `inactive` in one text — the same message and fix on both backends (the engine said "the
 * timer "k" cannot be paused while it is running", Redis "Cannot pause timer "k" while it is running.",
 * each with a fix of its own) — and the refusal changes nothing.
 */
import { BACKENDS, useBackend } from './backends';

const WAIT = 'Wait for the run to end; listen for its completed or failed event.';
const REPLACE =
  "Wait for the run to end, or schedule the key again with ifExists: 'replace' to supersede it.";

describe.each(BACKENDS)('%s backend: inactive refusals', (name) => {
  const backend = useBackend(name);

  it('a running timer: the operation, the status and what to do, alike on both backends', async () => {
    const h = await backend.open();
    // on the backend's clock: virtual for memory; a real short wait on Redis
    await h.timers.schedule({ key: 'k', handler: 'work', every: 100, payload: { sleepMs: 4_000 } });
    await h.started({ key: 'k' });
    const before = await h.timers.get('k');
    const range = { from: (await h.now()) - 60_000, to: (await h.now()) - 30_000 };
    const refusals: [string, () => Promise<unknown>, string][] = [
      ['reschedule', () => h.timers.reschedule('k', { delay: '1h' }), REPLACE],
      ['pause', () => h.timers.pause('k'), WAIT],
      ['trigger', () => h.timers.trigger('k'), WAIT],
      ['backfill', () => h.timers.backfill('k', range), WAIT],
    ];
    for (const [operation, call, fix] of refusals) {
      await expect(call()).rejects.toMatchObject({
        reason: 'inactive',
        field: 'key',
        message: `Cannot ${operation} timer "k" while it is running.`,
        fix,
        detail: { status: 'running' },
      });
    }
    expect(await h.timers.get('k')).toEqual(before);
  });

  it('a paused timer: trigger and backfill say to resume it first', async () => {
    const h = await backend.open();
    await h.timers.schedule({ key: 'p', handler: 'work', every: '1h' });
    const paused = await h.timers.pause('p');
    const range = { from: (await h.now()) - 7_200_000, to: (await h.now()) - 1 };
    for (const [operation, call] of [
      ['trigger', () => h.timers.trigger('p')],
      ['backfill', () => h.timers.backfill('p', range)],
    ] as const) {
      await expect(call()).rejects.toMatchObject({
        reason: 'inactive',
        field: 'key',
        message: `Cannot ${operation} timer "p" while it is paused.`,
        fix: 'Resume it first.',
        detail: { status: 'paused' },
      });
    }
    expect(await h.timers.get('p')).toEqual(paused);
  });
});

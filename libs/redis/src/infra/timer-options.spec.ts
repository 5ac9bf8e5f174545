import { MAX_TIMEOUT_MS, SundialError } from '@sundial/core';
import { RedisTimers } from '../client/redis-timers';
import { Dispatcher } from '../fire/dispatcher';
import { Reconciler } from '../fire/reconciler';
import { TimerRunner } from '../fire/timer-runner';
import { watchPartitionCount } from './layout-watch';
import { settledWithin } from './settled-within';

/**
 * A duration option that becomes a Node timer may not pass the longest one (2^31−1 ms): a longer
 * `setTimeout`/`setInterval` fires after 1 ms (a lease renewed every ms, a poll or a reconcile in a busy
 * loop, a start that gave up each ping after 1 ms). Refused at construction, naming the option, before
 * any connection opens: the port is never dialled.
 */
describe('duration options past Node’s longest timer', () => {
  const connection = 'redis://127.0.0.1:1';
  const past = MAX_TIMEOUT_MS + 1;

  it.each([
    ['TimerRunner', 'leaseMs', () => new TimerRunner({ connection, handlers: {}, leaseMs: past })],
    [
      'TimerRunner',
      'consumerStallMs',
      () => new TimerRunner({ connection, handlers: {}, consumerStallMs: past }),
    ],
    ['TimerRunner', 'startWaitMs', () => new TimerRunner({ connection, handlers: {}, startWaitMs: past })],
    ['Dispatcher', 'pollMs', () => new Dispatcher({ connection, pollMs: past })],
    ['Reconciler', 'intervalMs', () => new Reconciler({ connection, intervalMs: past })],
    ['RedisTimers', 'startWaitMs', () => new RedisTimers({ connection, startWaitMs: past })],
  ])('%s refuses %s 2^31 at construction', (where, field, make) => {
    let refusal: unknown;
    try {
      make();
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(SundialError);
    expect(refusal).toMatchObject({
      reason: 'invalid',
      field,
      message: expect.stringContaining(`${where}: ${field} ${past} is not an integer of ms from`) as unknown,
      fix: expect.stringContaining(`${MAX_TIMEOUT_MS} (Node's longest timer)`) as unknown,
    });
  });

  it('watchPartitionCount refuses intervalMs 2^31 before it connects', async () => {
    await expect(watchPartitionCount({ connection, intervalMs: past })).rejects.toMatchObject({
      reason: 'invalid',
      field: 'intervalMs',
      message: `watchPartitionCount: intervalMs ${past} is not an integer of ms from 1 to ${MAX_TIMEOUT_MS}.`,
    });
  });

  it('a close grace past the longest timer is waited, not over after 1 ms', async () => {
    let settle = (): void => undefined;
    const work = new Promise<void>((resolve) => (settle = resolve));
    const within = settledWithin(work, past);
    const early = new Promise<'still waiting'>((resolve) => setTimeout(resolve, 50, 'still waiting'));
    expect(await Promise.race([within, early])).toBe('still waiting');
    settle();
    expect(await within).toBe(true);
  });
});

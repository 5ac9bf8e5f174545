import type { TimerEvent } from '@sundial/core';
import { FireCommands, RedisTimers } from '@sundial/redis';
import { waitFor } from '@sundial/testing/harness';
import { refOf, useFirePath } from './fire-fixture';

const fire = useFirePath();

/**
 * take-due, claim and complete run as Redis Functions (store/script-functions.ts): a library's top-level
 * locals live from call to call, so what a call learns must not reach the next one.
 */
describe('the fire path as Redis Functions', () => {
  it('a call whose events reached no subscriber does not keep the next call’s events unpublished', async () => {
    const prefix = 'unheard';
    const timers = new RedisTimers({ connection: fire.url(), prefix });
    const commands = new FireCommands(fire.raw, timers.keys);
    const fireOne = async (key: string) => {
      const timer = await timers.schedule({ key, handler: 'h', delay: 0 });
      await commands.takeDue(0, 100, 0);
      const [claim] = await commands.claim(0, 30_000, 'w', [refOf(timer)]);
      expect(claim.kind).toBe('claimed');
      const run = {
        ...refOf(timer),
        runCount: 1,
        mode: 'held',
        outcome: 'ok',
        missed: 0,
        overlap: 0,
      } as const;
      expect(await commands.complete(0, [{ ...run, once: true }])).toEqual([
        { kind: 'done', missed: 0, overlap: 0 },
      ]);
    };
    const subscriber = fire.raw.duplicate();
    try {
      await fireOne('first'); // no one listens: its calls find no subscriber
      const events: TimerEvent[] = [];
      subscriber.on('message', (_channel: string, message: string) =>
        events.push(JSON.parse(message) as TimerEvent),
      );
      await subscriber.subscribe(`${prefix}:events`);
      await fireOne('second');
      await waitFor(() => events.some((event) => event.type === 'completed' && event.key === 'second'));
    } finally {
      await subscriber.quit();
      await timers.dispose();
    }
  });

  it('a Redis that lost its functions (FUNCTION FLUSH) gets them back at the next call', async () => {
    const cluster = await fire.cluster();
    const timer = await cluster.timers.schedule({ key: 'after-flush', handler: 'h', delay: 0 });
    await fire.raw.call('FUNCTION', 'FLUSH');
    const taken = await cluster.commands.takeDue(0, 100, 0);
    expect(taken.job?.timers.map((ref) => ref.key)).toEqual(['after-flush']);
    await fire.raw.call('FUNCTION', 'FLUSH');
    const [claim] = await cluster.commands.claim(0, 30_000, 'w', [refOf(timer)]);
    expect(claim.kind).toBe('claimed');
  });
});

import { oddThrownValues } from '@sundial/testing/harness';
import { harness } from '../../../../test/engine/harness';

/** Defect 5 of issue 8: whatever a handler throws or rejects with lands the run `failed`, and the engine goes on. */
describe.each(oddThrownValues())('a handler that throws %s', (_name, make) => {
  it.each([
    [
      'throws it',
      () => {
        throw make();
      },
    ],
    ['rejects with it', () => Promise.reject(make())],
  ])(
    '%s: the run fails with a safe error, failed is emitted, and later timers still run',
    async (_how, odd) => {
      const { engine, clock, runs, eventsOf } = harness({ handlers: { odd } });
      await engine.schedule({ key: 'odd', handler: 'odd', delay: 10, removeOnComplete: false });
      await engine.schedule({ key: 'next', handler: 'work', delay: 20 });
      await clock.advance(30);

      const [failed] = eventsOf('failed');
      expect(failed).toMatchObject({ key: 'odd', version: 1, error: { message: expect.any(String) } });
      expect(Object.keys(failed.error!).every((field) => field === 'message' || field === 'reason')).toBe(
        true,
      );
      const timer = await engine.get('odd');
      expect(timer).toMatchObject({ status: 'failed', last: { status: 'failed', error: failed.error } });
      expect(runs.map((run) => run.key)).toEqual(['next']);
      expect(eventsOf('completed').map((event) => event.key)).toEqual(['next']);
    },
  );
});

describe('a listener that throws an odd value', () => {
  it.each(oddThrownValues())(
    '%s: is logged, and the engine and other listeners go on',
    async (_name, make) => {
      const { engine, clock, runs, errors, eventsOf } = harness();
      engine.on('scheduled', () => {
        throw make();
      });
      engine.on('running', () => Promise.reject(make()));
      await engine.schedule({ key: 'k', handler: 'work', delay: 10 });
      await clock.advance(10);
      await Promise.resolve();
      expect(runs).toHaveLength(1);
      expect(eventsOf('completed')).toHaveLength(1);
      expect(errors).toEqual([
        expect.stringContaining('a scheduled listener threw'),
        expect.stringContaining('a running listener threw'),
      ]);
    },
  );
});

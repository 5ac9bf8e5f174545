import { SundialError } from '@sundial/core';
import { TimerRunner } from './timer-runner';

/** docs/spec.md §4.2: `dispatcherGraceMs` is refused, saying why and what to write, before anything opens. */
describe('TimerRunner dispatcherGraceMs', () => {
  it.each([0, 299, -1, 1.5, Number.NaN, '15000', null])('refuses %p', (value) => {
    const made = () =>
      new TimerRunner({
        connection: 'redis://127.0.0.1:1',
        handlers: {},
        dispatcherGraceMs: value as number,
      });
    expect(made).toThrow(SundialError);
    expect(made).toThrow(
      expect.objectContaining({
        reason: 'invalid',
        field: 'dispatcherGraceMs',
        message: expect.stringContaining('is not an integer of at least 300'),
        fix: expect.stringContaining('leave it out for the default (15000)'),
      }),
    );
  });
});

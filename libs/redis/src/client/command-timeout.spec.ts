import { SundialError } from '@sundial/core';
import { checkCommandTimeout, DEFAULT_COMMAND_TIMEOUT_MS, MAX_COMMAND_TIMEOUT_MS } from './command-timeout';

/**
 * docs/spec.md §5.5 `commandTimeoutMs`: a whole number of ms from 1 to Node's longest timer. Past it
 * ioredis's timer fired after 1 ms: every call answered `unavailable` "no answer within 3000000000 ms".
 */
describe('checkCommandTimeout', () => {
  it('takes the default and any whole number of ms from 1 to the longest timer', () => {
    expect(checkCommandTimeout()).toBe(DEFAULT_COMMAND_TIMEOUT_MS);
    expect(checkCommandTimeout(1)).toBe(1);
    expect(checkCommandTimeout(MAX_COMMAND_TIMEOUT_MS)).toBe(2 ** 31 - 1);
  });

  it.each([0, -1, 1.5, MAX_COMMAND_TIMEOUT_MS + 1, 3_000_000_000])(
    'refuses %p, invalid on commandTimeoutMs',
    (ms) => {
      const call = (): number => checkCommandTimeout(ms);
      expect(call).toThrow(SundialError);
      expect(call).toThrow(
        expect.objectContaining({ reason: 'invalid', field: 'commandTimeoutMs' }) as Error,
      );
    },
  );
});

import { EXIT } from './cli-error';
import { MAX_WAIT_MS, waitBound } from './wait-bound';

/**
 * The CLI's SUNDIAL_TIMEOUT_MS and SUNDIAL_COMMAND_TIMEOUT_MS (docs/spec.md §5.6): past Node's longest
 * timer a wait fired after 1 ms — `sundial repartition` with SUNDIAL_COMMAND_TIMEOUT_MS=3000000000 exited
 * 3 at once, "no answer within 3000000000 ms". Now a bad command line, before anything is sent.
 */
describe('waitBound', () => {
  const read = (value?: string): number =>
    waitBound(
      value === undefined ? {} : { SUNDIAL_COMMAND_TIMEOUT_MS: value },
      'SUNDIAL_COMMAND_TIMEOUT_MS',
      5000,
    );

  it('unset or blank is the default; 1 to the longest timer is taken', () => {
    expect(read()).toBe(5000);
    expect(read(' ')).toBe(5000);
    expect(read('1')).toBe(1);
    expect(read(String(MAX_WAIT_MS))).toBe(2 ** 31 - 1);
  });

  it.each(['0', '5s', '-1', String(MAX_WAIT_MS + 1), '3000000000'])(
    '%j is a bad command line naming the variable',
    (value) => {
      let thrown: unknown;
      try {
        read(value);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toMatchObject({
        exitCode: EXIT.usage,
        reason: 'invalid',
        field: 'SUNDIAL_COMMAND_TIMEOUT_MS',
      });
    },
  );
});

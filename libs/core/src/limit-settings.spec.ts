import { SundialError } from './errors';
import { ENV_LIMIT_SETTINGS, normalizeSpec, type SpecLimits } from './validation';

/**
 * A refusal by a limit names, in its fix, what the caller can change: a library's `limits` option
 * (RedisTimers, createEngine, SundialModule read no environment variable), or the standalone scheduler's
 * environment variable.
 */
describe('where a refusal says the limits are set', () => {
  const once = { key: 'invoice:42:remind', handler: 'invoice.remind', delay: '3d' };
  const limits = { maxPayloadBytes: 10, minEveryMs: 1000 };

  function fixOf(run: () => unknown): string {
    try {
      run();
    } catch (error) {
      if (error instanceof SundialError) return error.fix;
      throw error;
    }
    throw new Error('expected a refusal, but the call succeeded');
  }

  const fixes = (given: SpecLimits): string[] => [
    fixOf(() => normalizeSpec({ ...once, payload: '123456789' }, given)),
    fixOf(() => normalizeSpec({ ...once, meta: { note: '123456789' } }, given)),
    fixOf(() => normalizeSpec({ key: once.key, handler: once.handler, every: 999 }, given)),
  ];

  it('names the limits option by default', () => {
    expect(fixes(limits)).toEqual([
      expect.stringMatching(/or raise the limits\.maxPayloadBytes option\.$/),
      expect.stringMatching(/or raise the limits\.maxPayloadBytes option\.$/),
      expect.stringMatching(/the minimum is set by the limits\.minEveryMs option\.$/),
    ]);
  });

  it("names the scheduler's environment variables when the limits come from there", () => {
    expect(fixes({ ...limits, setBy: ENV_LIMIT_SETTINGS })).toEqual([
      expect.stringMatching(/or raise SUNDIAL_MAX_PAYLOAD_BYTES\.$/),
      expect.stringMatching(/or raise SUNDIAL_MAX_PAYLOAD_BYTES\.$/),
      expect.stringMatching(/the minimum is set by SUNDIAL_MIN_EVERY_MS\.$/),
    ]);
  });
});

import { SundialError } from '@sundial/core';
import {
  DEFAULT_CLAIM_AHEAD_MS,
  DEFAULT_COMMAND_TIMEOUT_MS,
  DEFAULT_DISPATCHER_GRACE_MS,
} from '@sundial/redis';
import { pino } from 'pino';
import { type WorkerConfig, workerConfigFromEnv } from './worker-config';
import { WorkerModule } from './worker.module';

/**
 * docs/spec.md §5.4: the runner options the worker reads from its environment and checks with the
 * runner's own bounds (§3.2 `claimAheadMs`, §4.2 `dispatcherGraceMs`), a refusal naming the variable.
 */
describe.each([
  {
    variable: 'SUNDIAL_CLAIM_AHEAD_MS',
    option: 'claimAheadMs' as const,
    fallback: DEFAULT_CLAIM_AHEAD_MS,
    taken: [0, 50],
    pastBound: '80',
    bound: 'from 0 to 50',
    notWhole: ['2.5', '-1'],
  },
  {
    variable: 'SUNDIAL_DISPATCHER_GRACE_MS',
    option: 'dispatcherGraceMs' as const,
    fallback: DEFAULT_DISPATCHER_GRACE_MS,
    taken: [300, 60_000],
    pastBound: '100',
    bound: 'at least 300',
    notWhole: ['15s', '-1'],
  },
])('$variable', ({ variable, option, fallback, taken, pastBound, bound, notWhole }) => {
  const read = (value?: string): WorkerConfig[typeof option] =>
    workerConfigFromEnv(value === undefined ? {} : { [variable]: value })[option];

  it('unset or blank is the runner default; a value within the bound is taken as is', () => {
    expect(read()).toBe(fallback);
    expect(read(' ')).toBe(fallback);
    for (const value of taken) expect(read(String(value))).toBe(value);
  });

  it('refuses a value past the bound naming the variable, the bound and the fix', () => {
    let refusal: unknown;
    try {
      read(pastBound);
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(SundialError);
    expect(refusal).toMatchObject({ reason: 'invalid', field: variable });
    expect((refusal as SundialError).message).toContain(bound);
    expect((refusal as SundialError).fix).toContain(`Write ${variable} as an integer`);
  });

  it('refuses what is not a whole number of ms', () => {
    for (const value of notWhole) expect(() => read(value)).toThrow(new RegExp(variable));
  });
});

/** docs/spec.md §5.4: SUNDIAL_COMMAND_TIMEOUT_MS bounds the worker's own Sundial client too, as the scheduler's. */
describe('SUNDIAL_COMMAND_TIMEOUT_MS', () => {
  it('is read by the worker (unset: the client default) and refused below 1', () => {
    expect(workerConfigFromEnv({}).commandTimeoutMs).toBe(DEFAULT_COMMAND_TIMEOUT_MS);
    expect(workerConfigFromEnv({ SUNDIAL_COMMAND_TIMEOUT_MS: '1500' }).commandTimeoutMs).toBe(1500);
    expect(() => workerConfigFromEnv({ SUNDIAL_COMMAND_TIMEOUT_MS: '0' })).toThrow(
      /SUNDIAL_COMMAND_TIMEOUT_MS/,
    );
  });

  it("is the worker's SundialModule commandTimeoutMs", () => {
    const config = workerConfigFromEnv({ SUNDIAL_COMMAND_TIMEOUT_MS: '1500' });
    const { imports = [] } = WorkerModule.forRoot(config, pino({ enabled: false }), {});
    // SundialModule.forRoot's given options: the one provider valued with the worker's app name
    const providers = imports.flatMap((module) => ('providers' in module ? (module.providers ?? []) : []));
    expect(providers).toContainEqual(
      expect.objectContaining({
        useValue: expect.objectContaining({ appName: 'sundial-worker', commandTimeoutMs: 1500 }),
      }),
    );
  });
});

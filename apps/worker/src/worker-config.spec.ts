import { SundialError } from '@sundial/core';
import { DEFAULT_CLAIM_AHEAD_MS } from '@sundial/redis';
import { workerConfigFromEnv } from './worker-config';

describe('SUNDIAL_CLAIM_AHEAD_MS', () => {
  it('unset or blank is the runner default; a value from 0 to 50 is taken as is', () => {
    expect(workerConfigFromEnv({}).claimAheadMs).toBe(DEFAULT_CLAIM_AHEAD_MS);
    expect(workerConfigFromEnv({ SUNDIAL_CLAIM_AHEAD_MS: ' ' }).claimAheadMs).toBe(DEFAULT_CLAIM_AHEAD_MS);
    expect(workerConfigFromEnv({ SUNDIAL_CLAIM_AHEAD_MS: '0' }).claimAheadMs).toBe(0);
    expect(workerConfigFromEnv({ SUNDIAL_CLAIM_AHEAD_MS: '50' }).claimAheadMs).toBe(50);
  });

  it('refuses a value past the bound naming the variable, the bound and the fix', () => {
    let refusal: unknown;
    try {
      workerConfigFromEnv({ SUNDIAL_CLAIM_AHEAD_MS: '80' });
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(SundialError);
    expect(refusal).toMatchObject({ reason: 'invalid', field: 'SUNDIAL_CLAIM_AHEAD_MS' });
    expect((refusal as SundialError).message).toContain('from 0 to 50');
    expect((refusal as SundialError).fix).toContain('SUNDIAL_CLAIM_AHEAD_MS');
  });

  it('refuses what is not a whole number of ms', () => {
    expect(() => workerConfigFromEnv({ SUNDIAL_CLAIM_AHEAD_MS: '2.5' })).toThrow(/SUNDIAL_CLAIM_AHEAD_MS/);
    expect(() => workerConfigFromEnv({ SUNDIAL_CLAIM_AHEAD_MS: '-1' })).toThrow(/SUNDIAL_CLAIM_AHEAD_MS/);
  });
});

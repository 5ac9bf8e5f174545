import { keyPath, type RedisServer, startRedis, waitFor } from '@sundial/testing/harness';
import { Redis } from 'ioredis';
import { schedulerConfigFromEnv } from '../../apps/scheduler/src/scheduler-config';
import { type RunningApp, startScheduler } from '../local-cluster';

/** How many commands of `name` Redis ran since the last CONFIG RESETSTAT (0 for none). */
async function commandCalls(raw: Redis, name: string): Promise<number> {
  const stats = await raw.info('commandstats');
  return Number(new RegExp(`^cmdstat_${name}:calls=(\\d+)`, 'm').exec(stats)?.[1] ?? 0);
}

/**
 * SUNDIAL_CANCEL_ALL_RECORDS (docs/spec.md §5.4): the scheduler's cancel by prefix through scope records
 * (RedisTimers' `cancelAllRecords`, §3.4) when `true`, key by key when unset; told by what Redis ran, as
 * only the mark adds keys to a record's set (`SADD`). Either way the count is the live timers under the
 * prefix, and each is gone from the API once the call answered.
 */
describe('SUNDIAL_CANCEL_ALL_RECORDS: the API cancel by prefix', () => {
  let redis: RedisServer | undefined;
  let raw: Redis | undefined;
  beforeAll(async () => {
    redis = await startRedis();
    raw = new Redis(redis.url);
  });
  afterAll(async () => {
    raw?.disconnect();
    await redis?.stop();
  });

  it('reads true and false, and leaves it off by default', () => {
    expect(schedulerConfigFromEnv({ SUNDIAL_CANCEL_ALL_RECORDS: 'true' }).cancelAllRecords).toBe(true);
    expect(schedulerConfigFromEnv({ SUNDIAL_CANCEL_ALL_RECORDS: 'false' }).cancelAllRecords).toBe(false);
    expect(schedulerConfigFromEnv({}).cancelAllRecords).toBe(false);
    expect(() => schedulerConfigFromEnv({ SUNDIAL_CANCEL_ALL_RECORDS: 'yes' })).toThrow(
      expect.objectContaining({ reason: 'invalid', field: 'SUNDIAL_CANCEL_ALL_RECORDS' }),
    );
  });

  it.each([
    [true, 'marks the keys in a record'],
    [false, 'cancels key by key'],
  ])('cancelAllRecords %s: %s, the count exact and the timers gone', async (cancelAllRecords) => {
    const prefix = `records-${cancelAllRecords}:`;
    let app: RunningApp | undefined;
    try {
      app = await startScheduler(redis!.url, { cancelAllRecords });
      for (let n = 0; n < 20; n++) {
        const made = await app.api('POST', '/v1/timers', { key: `${prefix}${n}`, handler: 'h', delay: '1h' });
        expect(made.status).toBe(201);
      }
      await raw!.config('RESETSTAT');
      const cancelled = await app.api('DELETE', `/v1/timers?prefix=${encodeURIComponent(prefix)}`);
      expect(cancelled).toMatchObject({ status: 200, body: { cancelled: 20 } });
      expect((await commandCalls(raw!, 'sadd')) > 0).toBe(cancelAllRecords);
      for (const n of [0, 19]) expect((await app.api('GET', keyPath(`${prefix}${n}`))).status).toBe(404);
      // the sweep after the answer empties the record (deadline: left as soon as it did)
      await waitFor(async () => (await raw!.keys('*:sc')).length === 0, { what: 'the record swept' });
    } finally {
      await app?.close();
    }
  });
});

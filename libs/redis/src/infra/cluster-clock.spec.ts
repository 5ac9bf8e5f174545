import type { RedisClient } from './connection';
import { ClusterClock } from './cluster-clock';

/** A Redis whose clock is right: TIME answers the true epoch, read from the monotonic clock. */
function rightRedis(): { redis: RedisClient; redisNow: () => number } {
  const origin = Date.now() - performance.now();
  const redisNow = () => origin + performance.now();
  const time = async (): Promise<[string, string]> => {
    const micros = Math.floor(redisNow() * 1000);
    return [String(Math.floor(micros / 1e6)), String(micros % 1e6)];
  };
  return { redis: { time } as unknown as RedisClient, redisNow };
}

/** This process's wall clock moved by `stepMs` from here on (NTP stepping it, an operator's `date`). */
function stepWallClock(stepMs: number): void {
  const wall = Date.now;
  jest.spyOn(Date, 'now').mockImplementation(() => wall() + stepMs);
}

describe('ClusterClock (docs/spec.md §4.4): a wall clock stepped while the process runs moves nothing', () => {
  afterEach(() => jest.restoreAllMocks());

  it('stays on Redis time when the wall clock steps 10 min forward after the measure', async () => {
    // 1 s of room between two reads made back to back (a paused process on a loaded host), against 10 min
    const { redis, redisNow } = rightRedis();
    const clock = new ClusterClock(redis);
    await clock.sync();
    stepWallClock(600_000);
    // The estimate on Date.now() was 10 min ahead: a cron's first occurrence skipped ten minutes of slots.
    expect(Math.abs(clock.now() - redisNow())).toBeLessThan(1_000);
    expect(Math.abs(clock.msUntil(redisNow() + 1_000) - 1_000)).toBeLessThan(1_000);
  });

  it('stays on Redis time when a wall clock 10 min behind at the measure is stepped right', async () => {
    const { redis, redisNow } = rightRedis();
    stepWallClock(-600_000);
    const clock = new ClusterClock(redis);
    await clock.sync();
    jest.restoreAllMocks();
    expect(Math.abs(clock.now() - redisNow())).toBeLessThan(1_000);
  });

  it('answers the local wall clock before its first measure', () => {
    const { redis } = rightRedis();
    expect(Math.abs(new ClusterClock(redis).now() - Date.now())).toBeLessThan(1_000);
  });

  it('reads TIME to the µs: an estimate not behind Redis by the part of a ms TIME floored away', async () => {
    // Redis at 1,000,000.999 ms, answered at once (a fake TIME reads no clock: the estimate moves only by
    // this process's own time since the sync, never back).
    const time = async (): Promise<[string, string]> => ['1000', '999'];
    const clock = new ClusterClock({ time } as unknown as RedisClient);
    await clock.sync(1);
    // Floored to the ms, the estimate said 1,000,000 — 0.999 ms behind: a fast cron run "ended" before its due.
    expect(clock.now()).toBeGreaterThanOrEqual(1_000_001);
  });
});

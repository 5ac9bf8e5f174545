import { RedisTicks } from './redis-ticks';

/**
 * A claim call on a simulated pair of clocks: Redis's reads `offset` more than `performance.now()`; the call
 * goes at `sent`, Redis runs it `toRedis` ms later and its answer is read `toAnswer` ms after that.
 */
function claim(offset: number, sent: number, toRedis: number, toAnswer: number, aheadMs: number) {
  const redisNow = sent + toRedis + offset;
  const due = redisNow + aheadMs;
  return {
    claimed: { due, leftMs: aheadMs },
    times: {
      arrivedAt: 0,
      claimSentAt: 0,
      claimAnsweredAt: 0,
      sentTick: sent,
      answeredTick: sent + toRedis + toAnswer,
    },
    /** when Redis's clock reaches the due, on the local clock */
    trueTick: due - offset,
  };
}

/** A double near 1.7e12 (epoch ms) holds ~0.25 µs: below Redis's TIME, which counts µs. */
const ROUNDING = 0.001;

describe('RedisTicks', () => {
  const OFFSET = 1_733_000_000_000;

  it('never puts a start before Redis reaches the due, however the answers are delayed', () => {
    const ticks = new RedisTicks();
    let now = 1_000;
    for (let i = 0; i < 10_000; i++) {
      now += Math.random() * 3;
      const c = claim(OFFSET, now, Math.random() * 0.5, Math.random() ** 4 * 5, 0.5 + Math.random() * 4.5);
      expect(ticks.startOf(0, c.claimed, c.times)).toBeGreaterThanOrEqual(c.trueTick - ROUNDING);
    }
  });

  it('starts a run whose answer was read late by a tighter answer of the last 50 ms', () => {
    const ticks = new RedisTicks();
    const prompt = claim(OFFSET, 1_000, 0.05, 0.05, 5);
    expect(ticks.startOf(0, prompt.claimed, prompt.times)).toBeCloseTo(prompt.trueTick + 0.05, 3);
    const readLate = claim(OFFSET, 1_030, 0.05, 3, 5);
    const tick = ticks.startOf(0, readLate.claimed, readLate.times);
    expect(tick).toBeGreaterThanOrEqual(readLate.trueTick - ROUNDING);
    expect(tick).toBeLessThan(readLate.trueTick + 0.1);
  });

  it('no longer uses a bound older than 50 ms', () => {
    const ticks = new RedisTicks();
    const prompt = claim(OFFSET, 1_000, 0.05, 0.05, 5);
    ticks.startOf(0, prompt.claimed, prompt.times);
    const later = claim(OFFSET, 1_060, 0.05, 3, 5);
    expect(ticks.startOf(0, later.claimed, later.times)).toBeCloseTo(later.trueTick + 3, 3);
  });

  it("drops a bound an answer contradicts: Redis's clock stepped back", () => {
    const ticks = new RedisTicks();
    const before = claim(OFFSET, 1_000, 0.05, 0.05, 5);
    ticks.startOf(0, before.claimed, before.times);
    const stepped = claim(OFFSET - 10, 1_010, 0.05, 1, 5);
    expect(ticks.startOf(0, stepped.claimed, stepped.times)).toBeGreaterThanOrEqual(
      stepped.trueTick - ROUNDING,
    );
  });

  it("keeps each partition's bound apart: on a Redis Cluster each primary has its own clock", () => {
    const ticks = new RedisTicks();
    const first = claim(OFFSET, 1_000, 0.05, 0.05, 5);
    ticks.startOf(0, first.claimed, first.times);
    // half a ms behind: within what this answer's own bounds allow, so only keeping them apart tells
    const other = claim(OFFSET - 0.5, 1_010, 1, 1, 5);
    expect(ticks.startOf(1, other.claimed, other.times)).toBeGreaterThanOrEqual(other.trueTick - ROUNDING);
  });
});

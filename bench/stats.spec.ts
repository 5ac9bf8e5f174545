import { histogram, percentile, ratePerSecond, ratio, summarize } from './stats';

describe('bench statistics', () => {
  describe('percentile (nearest rank)', () => {
    const oneToHundred = Array.from({ length: 100 }, (_, i) => i + 1);

    it('returns a measured value at the nearest rank', () => {
      expect(percentile(oneToHundred, 50)).toBe(50);
      expect(percentile(oneToHundred, 99)).toBe(99);
      expect(percentile(oneToHundred, 100)).toBe(100);
      expect(percentile(oneToHundred, 0)).toBe(1);
      expect(percentile([10, 20, 30], 50)).toBe(20);
      expect(percentile([10, 20, 30, 40], 50)).toBe(20);
    });

    it('lets one outlier of a hundred set p100 but not p99', () => {
      const samples = [...Array<number>(99).fill(1), 1000];
      expect(percentile(samples, 99)).toBe(1);
      expect(percentile(samples, 100)).toBe(1000);
    });

    it('is NaN on an empty sample and refuses a percentile outside 0..100', () => {
      expect(percentile([], 50)).toBeNaN();
      expect(() => percentile([1], 101)).toThrow(RangeError);
      expect(() => percentile([1], -1)).toThrow(RangeError);
    });
  });

  describe('summarize', () => {
    it('sorts numerically (not as strings) and reports min, p50, p99, max, mean', () => {
      const summary = summarize([100, 9, -3, 20, 4]);
      expect(summary).toEqual({ count: 5, min: -3, p50: 9, p99: 100, max: 100, mean: 26 });
    });

    it('does not reorder the caller’s array', () => {
      const samples = [3, 1, 2];
      summarize(samples);
      expect(samples).toEqual([3, 1, 2]);
    });

    it('reports NaNs for an empty sample', () => {
      const summary = summarize([]);
      expect(summary.count).toBe(0);
      expect(summary.p99).toBeNaN();
      expect(summary.mean).toBeNaN();
    });
  });

  describe('ratePerSecond', () => {
    it('converts a count over milliseconds to a per-second rate', () => {
      expect(ratePerSecond(30_000, 1_500)).toBe(20_000);
      expect(ratePerSecond(1, 1_000)).toBe(1);
    });

    it('is NaN when no time elapsed', () => {
      expect(ratePerSecond(10, 0)).toBeNaN();
    });
  });

  describe('histogram', () => {
    it('puts every sample in exactly one bucket, with under- and overflow buckets', () => {
      const buckets = histogram([-5, 0, 0.5, 1, 2, 9.99, 10, 500], [0, 1, 10]);
      expect(buckets).toEqual([
        { from: -Infinity, to: 0, count: 1 },
        { from: 0, to: 1, count: 2 },
        { from: 1, to: 10, count: 3 },
        { from: 10, to: Infinity, count: 2 },
      ]);
    });

    it('refuses edges that are not strictly ascending', () => {
      expect(() => histogram([1], [1, 1])).toThrow(RangeError);
      expect(() => histogram([1], [2, 1])).toThrow(RangeError);
    });
  });

  describe('ratio', () => {
    it('divides, and is NaN when either side is missing or the denominator is 0', () => {
      expect(ratio(3, 2)).toBe(1.5);
      expect(ratio(3, 0)).toBeNaN();
      expect(ratio(NaN, 2)).toBeNaN();
    });
  });
});

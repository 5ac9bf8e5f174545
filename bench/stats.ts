/** Summary of a sample of numbers (e.g. lateness in ms): what the report prints. */
export interface Summary {
  count: number;
  min: number;
  p50: number;
  p99: number;
  max: number;
  mean: number;
}

export interface HistogramBucket {
  /** inclusive lower bound; the first bucket also takes everything below it */
  from: number;
  /** exclusive upper bound; `Infinity` for the overflow bucket */
  to: number;
  count: number;
}

/**
 * The p-th percentile (0 ≤ p ≤ 100) of an ascending sample, nearest-rank method: the smallest value
 * such that at least p % of the sample is ≤ it. Nearest-rank never invents a value that was not measured.
 */
export function percentile(sortedAscending: readonly number[], p: number): number {
  if (sortedAscending.length === 0) return NaN;
  if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile must be within 0..100, got ${p}`);
  const rank = Math.max(1, Math.ceil((p / 100) * sortedAscending.length));
  return sortedAscending[rank - 1];
}

export function summarize(samples: readonly number[]): Summary {
  if (samples.length === 0) return { count: 0, min: NaN, p50: NaN, p99: NaN, max: NaN, mean: NaN };
  const sorted = Float64Array.from(samples).sort();
  const values = Array.from(sorted);
  let total = 0;
  for (const value of values) total += value;
  return {
    count: values.length,
    min: values[0],
    p50: percentile(values, 50),
    p99: percentile(values, 99),
    max: values[values.length - 1],
    mean: total / values.length,
  };
}

/** Events per second; NaN when no time passed (a rate that cannot be measured is not infinite). */
export function ratePerSecond(count: number, elapsedMs: number): number {
  return elapsedMs > 0 ? (count * 1000) / elapsedMs : NaN;
}

/**
 * Counts samples into buckets bounded by ascending `edges`: [−∞, e1), [e1, e2), …, [eN, ∞).
 * Returns edges.length + 1 buckets so no sample is ever dropped.
 */
export function histogram(samples: readonly number[], edges: readonly number[]): HistogramBucket[] {
  for (let i = 1; i < edges.length; i++) {
    if (!(edges[i] > edges[i - 1])) throw new RangeError('histogram edges must be strictly ascending');
  }
  const bounds = [-Infinity, ...edges, Infinity];
  const buckets = bounds.slice(0, -1).map((from, i) => ({ from, to: bounds[i + 1], count: 0 }));
  for (const sample of samples) buckets[bucketIndex(edges, sample)].count++;
  return buckets;
}

/** Binary search: the number of edges ≤ value is the bucket index. */
function bucketIndex(edges: readonly number[], value: number): number {
  let low = 0;
  let high = edges.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (edges[middle] <= value) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** b / a, or NaN when it cannot be computed, so a report never prints a division by zero as a ratio. */
export function ratio(numerator: number, denominator: number): number {
  return Number.isFinite(numerator) && Number.isFinite(denominator) && denominator !== 0
    ? numerator / denominator
    : NaN;
}

import { refusals } from '@sundial/core';

/** For the classes that work on partitions for the fire path (Dispatcher, Reconciler, TimerRunner). */
export interface ServeOptions {
  /**
   * the partitions this process hands off, reconciles or consumes (default all): pins processes to
   * partitions, e.g. one group per Redis Cluster shard; together a deployment's processes must serve
   * every partition, or the timers of one left out never fire
   */
  serve?: readonly number[];
}

/**
 * The partitions to serve, ascending: all of `0..partitions-1` when `serve` is not given; else each
 * must be an integer partition, named once, and at least one. A bad list throws the `invalid` refusal
 * naming `field` (the option, or the environment variable it was read from).
 */
export function servedPartitions(options: { partitions?: number } & ServeOptions, field = 'serve'): number[] {
  const partitions = options.partitions ?? 1;
  const { serve } = options;
  if (serve === undefined) return Array.from({ length: partitions }, (_, n) => n);
  const refuse = (problem: string) => refusals.invalidServe(field, partitions, problem);
  if (serve.length === 0) throw refuse('names no partition');
  const seen = new Set<number>();
  for (const partition of serve) {
    if (!Number.isInteger(partition) || partition < 0 || partition >= partitions)
      throw refuse(`names ${String(partition)}, which is not a partition`);
    if (seen.has(partition)) throw refuse(`names partition ${partition} twice`);
    seen.add(partition);
  }
  return [...seen].sort((a, b) => a - b);
}

/**
 * Ascending partitions in SUNDIAL_SERVE_PARTITIONS' notation, runs of three or more as ranges:
 * `[0, 1, 2, 3, 6, 7]` → `0-3,6,7` (what a log line and a dispatcher's presence say).
 */
export function partitionRanges(partitions: readonly number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < partitions.length;) {
    let end = i;
    while (end + 1 < partitions.length && partitions[end + 1] === partitions[end] + 1) end++;
    if (end - i >= 2) parts.push(`${partitions[i]}-${partitions[end]}`);
    else parts.push(...partitions.slice(i, end + 1).map(String));
    i = end + 1;
  }
  return parts.join(',');
}

/**
 * What partitionRanges wrote, read back; null for any other text or a partition not below `count`
 * (nothing is guessed, and a range of a billion is not spelled out).
 */
export function readPartitionRanges(text: string, count: number): number[] | null {
  const partitions: number[] = [];
  for (const item of text.split(',')) {
    const range = /^(\d+)(?:-(\d+))?$/.exec(item);
    if (!range) return null;
    const [first, last] = [Number(range[1]), Number(range[2] ?? range[1])];
    if (last < first || last >= count) return null;
    for (let n = first; n <= last; n++) partitions.push(n);
  }
  return partitions;
}

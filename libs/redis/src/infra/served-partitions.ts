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

import { ReplyError } from 'ioredis';

/**
 * The layout fence (docs/design.md "Repartition", `commands/includes/layout-fence.lua`): a store write
 * names the partition count its caller spreads keys over, and a partition a repartition gave to another
 * count refuses it. Only store writes carry it; the fire path acts on rows where they are.
 */
export function fencedArgv1(partitions: number, argv1: string): string {
  return `#${fenceValue(partitions)}#${argv1}`;
}

/**
 * What `P:{pN}:layout` holds for the writes of processes with `partitions`: the count and 'k' (the
 * chunked key index), a value the versions before it never send, so their writes are refused.
 */
export function fenceValue(partitions: number): string {
  return `${partitions}k`;
}

/** The count a fenced partition answered with, or null when `error` is not a fence refusal. */
export function fenceRefusal(error: unknown): number | null {
  if (!(error instanceof ReplyError)) return null;
  const match = /SUNDIAL_LAYOUT (\d+)/.exec((error as Error).message);
  return match ? Number(match[1]) : null;
}

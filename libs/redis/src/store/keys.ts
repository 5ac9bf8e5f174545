/** 32-bit FNV-1a over the UTF-16 code units of `text` (keys are ASCII, so this is FNV-1a over bytes). */
export function fnv1a32(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/**
 * The Redis key layout of docs/design.md. Every key of partition N carries the hash tag `{pN}`, so a
 * Lua script over one partition touches one slot (Redis Cluster) and BullMQ's queue shares it.
 */
export class SundialKeys {
  constructor(
    readonly prefix = 'sundial',
    readonly partitions = 1,
  ) {
    if (!Number.isInteger(partitions) || partitions < 1) {
      throw new RangeError(`partitions must be a positive integer, got ${partitions}`);
    }
  }

  partitionOf(key: string): number {
    return fnv1a32(key) % this.partitions;
  }

  /** Every partition number, 0..P-1. */
  all(): number[] {
    return Array.from({ length: this.partitions }, (_, n) => n);
  }

  tag(partition: number): string {
    return `{p${partition}}`;
  }

  /** `P:{pN}:` — what every script receives as KEYS[1] and appends its key names to. */
  base(partition: number): string {
    return `${this.prefix}:${this.tag(partition)}:`;
  }

  row(key: string): string {
    return `${this.base(this.partitionOf(key))}t:${key}`;
  }

  tombstone(key: string): string {
    return `${this.base(this.partitionOf(key))}x:${key}`;
  }

  due(partition: number): string {
    return `${this.base(partition)}due`;
  }

  armed(partition: number): string {
    return `${this.base(partition)}armed`;
  }

  keys(partition: number): string {
    return `${this.base(partition)}keys`;
  }

  leases(partition: number): string {
    return `${this.base(partition)}leases`;
  }

  ids(partition: number): string {
    return `${this.base(partition)}ids`;
  }

  seq(partition: number): string {
    return `${this.base(partition)}seq`;
  }

  get eventsChannel(): string {
    return `${this.prefix}:events`;
  }

  get abortChannel(): string {
    return `${this.prefix}:abort`;
  }

  /** The BullMQ queue of a partition; BullMQ is given `bullPrefix`, so its keys are `P:sundial-fire-{pN}:*`. */
  queueName(partition: number): string {
    return `sundial-fire-${this.tag(partition)}`;
  }

  get bullPrefix(): string {
    return this.prefix;
  }

  /** The partition an id names (`<seq>p<N>`), or null when the id is not one of ours. */
  partitionOfId(id: string): number | null {
    const match = /^\d+p(\d+)$/.exec(id);
    if (!match) return null;
    const partition = Number(match[1]);
    return partition < this.partitions ? partition : null;
  }
}

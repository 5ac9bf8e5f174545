import { DEFAULT_LEDGER_SIZE, fnv1a32, refusals } from '@sundial/core';
import { checkKeyPrefix } from './key-prefix';

export { fnv1a32 };

/** Redis Cluster's hash slots: CRC16 (XMODEM) of the hash tag, mod 16384 (`CLUSTER KEYSLOT`). */
export const CLUSTER_SLOTS = 16_384;

export function keySlot(tag: string): number {
  let crc = 0;
  for (const byte of Buffer.from(tag)) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++)
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % CLUSTER_SLOTS;
}

/**
 * How partitions are tagged: `plain` `{pN}` (one node or Sentinel: the slot does not matter, and the
 * layout stays what it always was), or `spread` `{pN.s}` (Redis Cluster), with `s` the first number
 * that puts partition N's slot in the N-th of P equal ranges of the 16384 slots. A Cluster's slots are
 * split among its primaries in contiguous ranges (evenly by `redis-cli --cluster create`), so the
 * partitions spread over the primaries as evenly as P allows; with plain tags `{p0}`, `{p1}`, `{p4}`,
 * `{p5}` all hash to the last third of the slots.
 */
export type PartitionTags = 'plain' | 'spread';

/** The most partitions a prefix may have (each is a BullMQ queue and a dispatcher loop per process). */
export const MAX_PARTITIONS = 1024;

/**
 * The Redis key layout of docs/design.md. Every key of partition N carries its hash tag (`tag(N)`), so a
 * Lua script over one partition touches one slot (Redis Cluster) and BullMQ's queue shares it.
 */
export class SundialKeys {
  private readonly tags: string[];

  /**
   * `ledgerSize`: entries each key's ledger `P:{pN}:h:<key>` keeps (0: no ledger is written); every script
   * call carries it (runScript).
   */
  constructor(
    readonly prefix = 'sundial',
    readonly partitions = 1,
    readonly tagging: PartitionTags = 'plain',
    readonly ledgerSize = DEFAULT_LEDGER_SIZE,
  ) {
    checkKeyPrefix(prefix);
    if (!Number.isInteger(partitions) || partitions < 1 || partitions > MAX_PARTITIONS) {
      throw refusals.partitionsOption(partitions, MAX_PARTITIONS);
    }
    this.tags = this.all().map((n) => (tagging === 'plain' ? `{p${n}}` : `{${spreadTag(n, partitions)}}`));
  }

  partitionOf(key: string): number {
    return this.partitions === 1 ? 0 : fnv1a32(key) % this.partitions; // one partition: no hash per key
  }

  /** Every partition number, 0..P-1. */
  all(): number[] {
    return Array.from({ length: this.partitions }, (_, n) => n);
  }

  tag(partition: number): string {
    return this.tags[partition];
  }

  /** `P:{pN}:` — what every script receives as KEYS[1] and appends its key names to. */
  base(partition: number): string {
    return `${this.prefix}:${this.tag(partition)}:`;
  }

  row(key: string): string {
    return `${this.base(this.partitionOf(key))}t:${key}`;
  }

  /** The key's ledger (docs/design.md "Ledger"): a list, newest entry first. */
  ledger(key: string): string {
    return `${this.base(this.partitionOf(key))}h:${key}`;
  }

  /**
   * The closed ledger of a key removed on completion: a string with TTL, its entries oldest first, one
   * per line, every one older than the list's (docs/design.md "Ledger").
   */
  closedLedger(key: string): string {
    return `${this.base(this.partitionOf(key))}hd:${key}`;
  }

  tombstone(key: string): string {
    return `${this.base(this.partitionOf(key))}x:${key}`;
  }

  /** The record of the cancel-all call whose tombstones in the partition of `key` expire at `expiresAt`. */
  cancelRecord(key: string, expiresAt: number): string {
    return `${this.base(this.partitionOf(key))}xb:${expiresAt}`;
  }

  due(partition: number): string {
    return `${this.base(partition)}due`;
  }

  armed(partition: number): string {
    return `${this.base(partition)}armed`;
  }

  /** job id → hand-off ms of the fire jobs take-due named (design.md "Jobs") */
  jobs(partition: number): string {
    return `${this.base(partition)}jobs`;
  }

  keys(partition: number): string {
    return `${this.base(partition)}keys`;
  }

  leases(partition: number): string {
    return `${this.base(partition)}leases`;
  }

  /** `P:{pN}:free`: the lease records of free runs (awaitTask=false ticks) in flight, by `<key>|<version>`. */
  free(partition: number): string {
    return `${this.base(partition)}free`;
  }

  /** `P:{pN}:ic`: the suffixes `<M>:<chunk>` of the partition's live-id bitmaps (store/live-ids.ts). */
  idChunks(partition: number): string {
    return `${this.base(partition)}ic`;
  }

  /** `P:{pN}:i:<M>:<chunk>`: a bitmap of live ids (store/live-ids.ts). */
  idBitmap(partition: number, chunk: string): string {
    return `${this.base(partition)}i:${chunk}`;
  }

  /**
   * `P:{pN}:ids`: the `id → key` hash of live ids that the versions before the live-id bitmaps wrote;
   * `migrateLiveIds` (store/live-ids-migration.ts) converts it and it goes.
   */
  legacyIds(partition: number): string {
    return `${this.base(partition)}ids`;
  }

  seq(partition: number): string {
    return `${this.base(partition)}seq`;
  }

  /** `P:partitions`: the partition count the timers under this prefix were written with. */
  get partitionCount(): string {
    return `${this.prefix}:partitions`;
  }

  /**
   * `P:epoch`: `<ms>-<random hex>`, written by the first process that found it missing (docs/design.md
   * "Data loss"): a process that saw one value and later finds none, or another, knows Redis lost its data.
   */
  get dataMarker(): string {
    return `${this.prefix}:epoch`;
  }

  /**
   * `P:{pN}:epoch`: partition N's data marker (`<ms>-<random hex>`, docs/design.md "Data loss"), in the
   * partition's slot: on a Redis Cluster it goes with the shard that holds the partition, so a shard lost
   * alone (flushed, failed over to an empty replica) is noticed, which `P:epoch` (on one shard) cannot.
   */
  partitionMarker(partition: number): string {
    return `${this.base(partition)}epoch`;
  }

  /**
   * `P:dispatchers`: the dispatchers that handed timers off under this prefix lately — a zset, member
   * `<host-pid>|<partition count>|<served partitions>`, score the ms (Redis clock) its announcement
   * lasts to; written every few seconds with a TTL (fire/dispatcher-presence.ts). The runners warn when
   * a partition has none.
   */
  get dispatchers(): string {
    return `${this.prefix}:dispatchers`;
  }

  /**
   * `P:cron-sets:<app>`: the `@DistributedCron` / `@DistributedInterval` sets the replicas of `app`
   * declare, which of them is the newest, and whose pass ran last (client/declaration-sets.ts): a hash
   * with a TTL, renewed every few seconds while the app runs.
   */
  cronSets(app: string): string {
    return `${this.prefix}:cron-sets:${app}`;
  }

  /** `P:repartition`: a repartition in progress (docs/design.md "Repartition"), JSON `RepartitionRecord`. */
  get repartition(): string {
    return `${this.prefix}:repartition`;
  }

  /**
   * `P:repartitions`: how many repartitions finished (`INCR`, before the new count is set), so that a data
   * look tells two repartitions between its looks (4→2→4: the count as before) from none.
   */
  get repartitions(): string {
    return `${this.prefix}:repartitions`;
  }

  /** `P:{pN}:layout`: the partition count whose store writes this partition takes (the layout fence). */
  layoutFence(partition: number): string {
    return `${this.base(partition)}layout`;
  }

  /** `P:{pN}:moved`: ids a repartition moved into the partition (each arrives once). */
  moved(partition: number): string {
    return `${this.base(partition)}moved`;
  }

  /**
   * `P:writes-lost:<replid>:<offset>`: the fork of a failover that lost acknowledged writes (an hour's
   * TTL), written `SET NX` by the process that publishes its `reset` (infra/replication-history.ts).
   */
  writesLost(fork: string): string {
    return `${this.prefix}:writes-lost:${fork}`;
  }

  /**
   * `P:rewound`: the name of a restore from an older backup found (`SET NX`, a minute's TTL,
   * infra/rewind.ts), so that it is told once.
   */
  get rewound(): string {
    return `${this.prefix}:rewound`;
  }

  /**
   * `<marker>:reset:<value>`: the claim (`SET NX`, an hour's TTL) on the `reset` owed for a marker written
   * anew as `value` after a loss, in the marker's slot (infra/data-marker.ts): whoever wrote it anew, the
   * one process that claims it publishes the reset.
   */
  resetClaim(marker: string, value: string): string {
    return `${marker}:reset:${value}`;
  }

  get eventsChannel(): string {
    return `${this.prefix}:events`;
  }

  get abortChannel(): string {
    return `${this.prefix}:abort`;
  }

  /** `P:handlers`: `<count>|<served>|<handler>` → until when (Redis ms) live workers say they have it (fire/handler-presence.ts) */
  get handlers(): string {
    return `${this.prefix}:handlers`;
  }

  /** `P:handlers:new`: a runner announced a handler new to its partitions; the others look again at once */
  get handlersChannel(): string {
    return `${this.prefix}:handlers:new`;
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

/** `pN.s` with the first `s` whose slot lies in the N-th of `partitions` equal ranges (expected P tries). */
function spreadTag(partition: number, partitions: number): string {
  const low = Math.floor((partition * CLUSTER_SLOTS) / partitions);
  const high = Math.max(low + 1, Math.floor(((partition + 1) * CLUSTER_SLOTS) / partitions));
  for (let s = 0; ; s++) {
    const slot = keySlot(`p${partition}.${s}`);
    if (slot >= low && slot < high) return `p${partition}.${s}`;
  }
}

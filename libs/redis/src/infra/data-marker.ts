import { randomBytes } from 'node:crypto';
import { SundialKeys } from '../store/keys';
import { isCluster, type RedisClient } from './connection';
import { type DataLoss, dataLoss } from './data-loss';
import { readLayout, type StoredLayout } from './partition-count';

export type { DataLoss } from './data-loss';

export interface DataMarkerOptions {
  /**
   * also watch every partition's marker `P:{pN}:epoch` (the watches of layout-watch.ts); without it only
   * `P:epoch` (a client's `LayoutGuard`: no command per partition at its connect)
   */
  partitions?: boolean;
}

/** One marker of a look: its name, its value now, and whether this look may conclude on it. */
interface Look {
  name: string;
  partition: number | null;
  found: string | null;
  conclusive: boolean;
}

/**
 * Redis losing Sundial's data (a restart without persistence, a FLUSHALL, a failover to an empty replica)
 * would otherwise go unnoticed: the next read finds nothing and answers a miss. A marker `<ms>-<random>`
 * is written (`SET NX`) by the first process that finds it missing: `P:epoch` for the prefix, and with
 * `partitions` one per partition, `P:{pN}:epoch`, in the partition's slot — on a Redis Cluster each shard
 * holds the markers of its partitions, so a shard lost alone is noticed too. Each process remembers the
 * values it saw. A later look that finds one gone, or another, is a loss; the lost markers and
 * `P:partitions` are then written anew (as at a first start) and remembered, so one loss is told once per
 * process. The one process whose `SET NX` wrote the new value of the first lost marker it found gone
 * (`P:epoch`, else the lowest lost partition's) publishes a `reset` event (`count` 0), so that
 * @DistributedCron and schedules-file rows are registered again: one loss, one reset, however many
 * processes notice it and however many partitions it took; a second shard lost seconds later has its own. A marker first seen (a first start, a release before the markers, a
 * partition a repartition created) is recorded, no loss. A repartition, a failover that kept the data and
 * a reconnect leave every marker as it was.
 */
export class DataMarker {
  /** marker name → the value this process saw there */
  private readonly seen = new Map<string, string>();
  /** the stored partition count, as last read: the partitions whose markers the next look reads */
  private count: number;
  private readonly tagging: SundialKeys['tagging'];
  /** `P:partitions`/`P:repartition` as the last check read them (undefined: it read none, or failed) */
  private layoutRead: StoredLayout | undefined;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: SundialKeys,
    private readonly options: DataMarkerOptions = {},
  ) {
    this.count = keys.partitions;
    this.tagging = isCluster(redis) ? 'spread' : 'plain';
  }

  /**
   * Resolves the loss when a marker this process saw is gone or replaced, else null (a first look only
   * records what it finds). Rejects when Redis does not answer: nothing is concluded then.
   */
  async check(): Promise<DataLoss | null> {
    this.layoutRead = undefined;
    const layout = this.options.partitions
      ? new SundialKeys(this.keys.prefix, this.count, this.tagging)
      : null;
    const names = [this.keys.dataMarker, ...(layout?.all().map((n) => layout.partitionMarker(n)) ?? [])];
    // One GET each, sent side by side: one round trip, on a Redis Cluster one write per shard.
    const found = await Promise.all(names.map((name) => this.redis.get(name)));
    const settled = layout ? await this.layoutSettled(layout.partitions) : true;
    const looks = names.map((name, i): Look => {
      const partition = i === 0 ? null : i - 1;
      return { name, partition, found: found[i], conclusive: partition === null || settled };
    });
    return this.conclude(looks);
  }

  /**
   * Whether the partitions read are still the data's: the layout read after them holds the same count and
   * no repartition. A repartition deletes the markers of the partitions its new count does not have, and
   * sets the new count before it does: a look that read them while it ran concludes nothing on them.
   */
  private async layoutSettled(read: number): Promise<boolean> {
    this.layoutRead = await readLayout(this.redis, this.keys);
    const { count, repartition } = this.layoutRead;
    if (repartition) return false;
    const current = count || this.keys.partitions; // none: lost too, and written again below
    if (current === read) return true;
    this.count = current;
    // The partitions of the new count not seen yet are recorded at the next look; gone ones are forgotten.
    const kept = new SundialKeys(this.keys.prefix, current, this.tagging);
    const names = new Set([this.keys.dataMarker, ...kept.all().map((n) => kept.partitionMarker(n))]);
    for (const name of this.seen.keys()) if (!names.has(name)) this.seen.delete(name);
    return false;
  }

  /**
   * The layout the last `check` read (with `partitions`, once its markers were read), so that a watch
   * looking at the count right after it need not read it again; undefined when it read none.
   */
  lastLayout(): StoredLayout | undefined {
    return this.layoutRead;
  }

  private async conclude(looks: Look[]): Promise<DataLoss | null> {
    const lost: { look: Look; before: string }[] = [];
    const missing: Look[] = [];
    // What this look saw, remembered only once it is all done: a look that fails concludes nothing.
    const now = new Map<string, string>();
    for (const look of looks) {
      if (!look.conclusive) continue;
      const before = this.seen.get(look.name);
      if (before !== undefined && look.found !== before) lost.push({ look, before });
      if (look.found === null) missing.push(look);
      else now.set(look.name, look.found);
    }
    const written = await this.record(missing, now);
    for (const [name, value] of now) this.seen.set(name, value);
    if (lost.length === 0) return null;
    await this.redis.set(this.keys.partitionCount, String(this.keys.partitions), 'NX');
    // The reset is owed by the process that wrote the first lost marker this look found gone. One found
    // written anew was found gone, and its reset owed, by an earlier look (of another process): this one
    // may also find another marker gone since (two shards lost seconds apart), whose reset is its own.
    // Best effort: a reset that could not be published leaves the rows to the next boot, not the line unsaid.
    const gone = lost.find(({ look }) => look.found === null);
    const reset =
      gone && written.has(gone.look.name)
        ? await this.publishReset().then(
            () => true,
            () => false,
          )
        : false;
    return dataLoss(
      {
        prefix: this.keys.prefix,
        partitions: lost.flatMap(({ look }) => (look.partition === null ? [] : [look.partition])),
        count: this.count,
        markers: lost.map(({ before }) => before),
        reset,
      },
      this.options.partitions === true,
    );
  }

  /**
   * Writes a marker where there is none (`SET NX GET`: the one there, if another process was first),
   * side by side; puts each one there in `now`; resolves the names whose marker this process wrote.
   */
  private async record(missing: Look[], now: Map<string, string>): Promise<Set<string>> {
    const written = new Set<string>();
    await Promise.all(
      missing.map(async ({ name }) => {
        const mine = `${Date.now()}-${randomBytes(6).toString('hex')}`;
        const there = await this.redis.set(name, mine, 'NX', 'GET');
        if (there === null) written.add(name);
        now.set(name, there ?? mine);
      }),
    );
    return written;
  }

  /** What a global `cancelAll()` publishes: the registrars write their rows again (docs/spec.md §4.1). */
  private async publishReset(): Promise<void> {
    const reset = { type: 'reset', id: '', key: '', version: 0, kind: null, at: Date.now(), count: 0 };
    await this.redis.publish(this.keys.eventsChannel, JSON.stringify(reset));
  }
}

/**
 * Every marker's value now (`P:epoch`, then `P:{pN}:epoch` of each partition of `keys`; null where none),
 * one GET each side by side: what a client's events connection reads after it subscribed again.
 */
export function readMarkers(redis: RedisClient, keys: SundialKeys): Promise<(string | null)[]> {
  const names = [keys.dataMarker, ...keys.all().map((n) => keys.partitionMarker(n))];
  return Promise.all(names.map((name) => redis.get(name)));
}

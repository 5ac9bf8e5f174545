import { randomBytes } from 'node:crypto';
import { SundialKeys } from '../store/keys';
import { isCluster, type RedisClient } from './connection';
import { type DataLoss, dataLoss, dataRewound } from './data-loss';
import { readLayout, type StoredLayout } from './partition-count';
import { RewindWatch } from './rewind';

export type { DataLoss } from './data-loss';

/** One marker of a look: its name, partition (of `count`), value now, and whether the look may conclude on it. */
interface Look {
  name: string;
  partition: number | null;
  count: number;
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
 * process. The first lost marker a look finds (`P:epoch`, else the lowest lost partition's) is claimed by
 * its new value (`SET NX <marker>:reset:<value>`), and the one process whose claim wins publishes a `reset`
 * event (`count` 0), so that @DistributedCron and schedules-file rows are registered again: one loss, one
 * reset, however many processes notice it, however many partitions it took and whichever process wrote the
 * marker anew (a process started since, which never saw the old one, takes it for a first start: the
 * processes that saw the old one claim it); a second shard lost seconds later has its own.
 * A marker first seen (a first start, a release before the markers, a partition a repartition creates) is
 * recorded, no loss. A repartition, a failover that kept the data and a reconnect leave every marker as it
 * was; a loss while a repartition runs is told then (`conclusive`). Redis restored from an older backup
 * keeps the markers: each look also reads counters that only grow (rewind.ts), and one gone back is told
 * as a loss of the writes since the backup, with one reset as above (`P:rewound` claimed).
 */
export class DataMarker {
  /** marker name → the value this process saw there */
  private readonly seen = new Map<string, string>();
  /** the stored partition count, as last read: the partitions whose markers the next look reads */
  private count: number;
  private readonly tagging: SundialKeys['tagging'];
  /** this process claimed the reset of a loss a look found, and has not published it yet */
  private resetOwed = false;
  /** the new count of the repartition under way that the last look found (null: none) */
  private target: number | null = null;
  /** `P:repartitions` as the last look read it (undefined: none read yet) */
  private finished: number | undefined;
  /** `P:partitions`/`P:repartition` as the last check read them (undefined: it read none, or failed) */
  private layoutRead: StoredLayout | undefined;
  private readonly rewind: RewindWatch;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: SundialKeys,
  ) {
    this.count = keys.partitions;
    this.tagging = isCluster(redis) ? 'spread' : 'plain';
    this.rewind = new RewindWatch(redis, keys);
  }

  /**
   * Resolves the loss when a marker this process saw is gone or replaced, else null (a first look only
   * records what it finds). Rejects when Redis does not answer: nothing is concluded then.
   */
  async check(): Promise<DataLoss | null> {
    this.layoutRead = undefined;
    const looks = this.looks();
    // One GET each, sent side by side: one round trip, on a Redis Cluster one write per shard.
    const before = { count: this.count, finished: this.finished };
    const [found, counters] = await Promise.all([
      Promise.all(looks.map(({ name }) => this.redis.get(name))),
      this.rewind.read(new SundialKeys(this.keys.prefix, this.count, this.tagging)),
    ]);
    const conclusive = await this.conclusive();
    // The counters compare only within one layout: a repartition deletes and recreates them.
    const steady = this.count === before.count && this.finished === before.finished && this.target === null;
    for (const [i, look] of looks.entries()) {
      look.found = found[i];
      look.conclusive = look.partition === null || conclusive(look.name);
    }
    return this.conclude(looks, counters, steady);
  }

  /**
   * `P:epoch`, then the markers of the stored count's partitions and, while a repartition the last look
   * found is under way, those of its new count's not among them (a partition it creates, which the keys it
   * moves fill from its start: its loss then is a loss too).
   */
  private looks(): Look[] {
    const looks: Look[] = [
      { name: this.keys.dataMarker, partition: null, count: 0, found: null, conclusive: true },
    ];
    const names = new Set<string>();
    for (const count of new Set([this.count, this.target ?? this.count])) {
      const layout = new SundialKeys(this.keys.prefix, count, this.tagging);
      for (const partition of layout.all()) {
        const name = layout.partitionMarker(partition);
        if (!names.has(name)) looks.push({ name, partition, count, found: null, conclusive: false });
        names.add(name);
      }
    }
    return looks;
  }

  /**
   * Which partition markers just read are still the data's, by the layout read after them. A repartition
   * deletes the markers of the partitions its new count does not have only once it set that count: with
   * the count read as before, none was deleted (a repartition under way or not); with another, only those
   * of the new count's partitions are (the others are forgotten); after several repartitions, only
   * partition 0's (`P:repartitions`, counted as each finishes).
   */
  private async conclusive(): Promise<(name: string) => boolean> {
    this.layoutRead = await readLayout(this.redis, this.keys);
    const { count, repartition, finished } = this.layoutRead;
    const current = count || this.keys.partitions; // none: lost too, and written again below
    this.target = repartition && repartition.to !== current ? repartition.to : null;
    // More than one repartition finished since the last look (4→2→4): the counts between are unknown,
    // and only partition 0, which every count has, kept its marker for sure.
    const several = this.finished !== undefined && finished - this.finished > 1;
    this.finished = finished;
    if (current === this.count && !several) return () => true;
    this.count = current;
    const kept = this.markerNames(several ? 1 : current);
    for (const name of this.seen.keys()) if (!kept.has(name)) this.seen.delete(name);
    return (name) => kept.has(name);
  }

  /** `P:epoch` and the markers of `count`'s partitions. */
  private markerNames(count: number): Set<string> {
    const layout = new SundialKeys(this.keys.prefix, count, this.tagging);
    return new Set([this.keys.dataMarker, ...layout.all().map((n) => layout.partitionMarker(n))]);
  }

  /**
   * The layout the last `check` read (with `partitions`, once its markers were read), so that a watch
   * looking at the count right after it need not read it again; undefined when it read none.
   */
  lastLayout(): StoredLayout | undefined {
    return this.layoutRead;
  }

  private async conclude(
    looks: Look[],
    counters: Map<string, number>,
    steady: boolean,
  ): Promise<DataLoss | null> {
    const lost: { look: Look; before: string }[] = [];
    const missing: Look[] = [];
    // What this look saw, remembered only once its writes are all done: a look that fails concludes
    // nothing, and the next one finds the same loss (the markers it wrote are other values than before).
    const now = new Map<string, string>();
    for (const look of looks) {
      if (!look.conclusive) continue;
      const before = this.seen.get(look.name);
      if (before !== undefined && look.found !== before) lost.push({ look, before });
      if (look.found === null) missing.push(look);
      else now.set(look.name, look.found);
    }
    await this.record(missing, now);
    // The reset is owed by the process that claims the first lost marker's new value, whoever wrote it.
    // An earlier look (of this process or another) that found it lost claimed it: this one may also find
    // another marker lost since (two shards lost seconds apart), claimed by the looks that find it first.
    const first = lost[0]?.look.name;
    if (first !== undefined) await this.claimReset(first, now.get(first)!);
    if (lost.length > 0) await this.redis.set(this.keys.partitionCount, String(this.keys.partitions), 'NX');
    for (const [name, value] of now) this.seen.set(name, value);
    const rewound = await this.rewind.conclude(counters, steady, lost.length > 0);
    if (rewound?.first) this.resetOwed = true;
    const reset = await this.publishOwedReset();
    if (rewound) {
      const since = Number(now.get(this.keys.dataMarker)?.split('-')[0]);
      return dataRewound({ prefix: this.keys.prefix, count: this.count, since, rewound, reset });
    }
    if (lost.length === 0) return null;
    const partitions = lostPartitions(
      lost.map(({ look }) => look),
      this.count,
    );
    return dataLoss({
      prefix: this.keys.prefix,
      ...partitions,
      markers: lost.map(({ before }) => before),
      reset,
    });
  }

  /**
   * Writes a marker where there is none (`SET NX GET`: the one there, if another process was first),
   * side by side, and puts each one there in `now`.
   */
  private async record(missing: Look[], now: Map<string, string>): Promise<void> {
    await Promise.all(
      missing.map(async ({ name }) => {
        const mine = `${Date.now()}-${randomBytes(6).toString('hex')}`;
        const there = await this.redis.set(name, mine, 'NX', 'GET');
        now.set(name, there ?? mine);
      }),
    );
  }

  /** Claims the reset of the loss whose marker `name` was written anew as `value`: owed until published. */
  private async claimReset(name: string, value: string): Promise<void> {
    const claim = this.keys.resetClaim(name, value);
    if ((await this.redis.set(claim, String(Date.now()), 'EX', 3600, 'NX')) === 'OK') this.resetOwed = true;
  }

  /**
   * Publishes the reset this process owes, if any; resolves whether it did. One that could not be
   * published (Redis away again, a publish refused) stays owed and is tried again at the next look:
   * the rows are registered again later, not never.
   */
  private async publishOwedReset(): Promise<boolean> {
    if (!this.resetOwed) return false;
    const published = await publishReset(this.redis, this.keys).then(
      () => true,
      () => false,
    );
    if (published) this.resetOwed = false;
    return published;
  }
}

/**
 * What a global `cancelAll()` publishes, with `count` 0: the registrars write their rows again (docs/spec.md
 * §4.1), after a loss of data or of writes (replication-history.ts).
 */
export async function publishReset(redis: RedisClient, keys: SundialKeys): Promise<void> {
  const reset = { type: 'reset', id: '', key: '', version: 0, kind: null, at: Date.now(), count: 0 };
  await redis.publish(keys.eventsChannel, JSON.stringify(reset));
}

/**
 * The partitions lost, ascending, and the count they are of: during a repartition, the larger of the two
 * counts whose markers were read (with a partition of each lost, a whole Redis lost is `all` of it).
 */
function lostPartitions(looks: Look[], count: number): { partitions: number[]; count: number } {
  const partitions = looks.flatMap(({ partition }) => (partition === null ? [] : [partition]));
  return {
    partitions: [...new Set(partitions)].sort((a, b) => a - b),
    count: Math.max(count, ...looks.map((look) => look.count)),
  };
}

/**
 * Every marker's value now (`P:epoch`, then `P:{pN}:epoch` of each partition of `keys`; null where none),
 * one GET each side by side: what a client's events connection reads after it subscribed again.
 */
export function readMarkers(redis: RedisClient, keys: SundialKeys): Promise<(string | null)[]> {
  const names = [keys.dataMarker, ...keys.all().map((n) => keys.partitionMarker(n))];
  return Promise.all(names.map((name) => redis.get(name)));
}

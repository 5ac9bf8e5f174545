import { randomBytes } from 'node:crypto';
import type { SundialKeys } from '../store/keys';
import type { RedisClient } from './connection';

/** How long a restore's name (`P:rewound`) is kept: the looks of every process (5 s apart) find it. */
const REWOUND_TTL_S = 60;

/** What a look read of the counters when Redis went back in time; else the look concludes nothing. */
export interface Rewound {
  /** the counter found below the value an earlier look read there */
  counter: string;
  /** the value this look read (0: none) */
  read: number;
  /** the highest value an earlier look read there */
  seen: number;
  /**
   * the restore's name, the same for every look that finds it within a minute (`SET NX GET` of
   * `P:rewound`): a process tells it once, whichever of its watches finds it
   */
  name: string;
  /** whether this look's `SET NX` named it: the one look that publishes the `reset` */
  first: boolean;
}

/**
 * Redis restored from an older backup (RDB, AOF) keeps every data marker as it was: the data went back in
 * time and no marker says so. Each partition holds two counters that only grow — `P:{pN}:seq` (a timer's
 * id, at each schedule) and its fire queue's job id (at each fire) — read beside the markers (no write:
 * a failover that lost nothing stays one that changed nothing, for the replication watch). One read below
 * what an earlier look of this watch read there (its looks run one at a time) means the schedules and
 * fires since were undone: a restore, or a failover to a replica that lacked them (which the replication
 * watch tells when it finds the fork). A restore that undid neither (only cancels, pauses) is not seen.
 */
export class RewindWatch {
  /** counter name → the value the last look read (the partitions of the layout it read) */
  private seen = new Map<string, number>();

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: SundialKeys,
  ) {}

  /** The counters of `layout`'s partitions, read side by side with the markers. */
  async read(layout: SundialKeys): Promise<Map<string, number>> {
    const names = layout
      .all()
      .flatMap((n) => [layout.seq(n), `${layout.bullPrefix}:${layout.queueName(n)}:id`]);
    const values = await Promise.all(names.map((name) => this.redis.get(name)));
    return new Map(names.map((name, i) => [name, Number(values[i] ?? 0)]));
  }

  /**
   * What the look's counters tell, given whether the layout stayed as the last look read it (a
   * repartition deletes and recreates counters: those are then only recorded) and whether the same look
   * found a marker lost (then the loss is told, not a restore). Remembers the counters either way, so
   * that one restore is found once by this watch.
   */
  async conclude(read: Map<string, number>, steady: boolean, lost: boolean): Promise<Rewound | null> {
    const before = this.seen;
    this.seen = read;
    if (lost || !steady) return null;
    for (const [counter, value] of read) {
      const seen = before.get(counter);
      if (seen === undefined || value >= seen) continue;
      const mine = `${Date.now()}-${randomBytes(6).toString('hex')}`;
      const there = await this.redis.set(this.keys.rewound, mine, 'EX', REWOUND_TTL_S, 'NX', 'GET');
      return { counter, read: value, seen, name: there ?? mine, first: there === null };
    }
    return null;
  }
}

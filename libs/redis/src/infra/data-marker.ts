import { randomBytes } from 'node:crypto';
import type { SundialKeys } from '../store/keys';
import type { RedisClient } from './connection';

/** What a process noticed: the data it saw under its prefix is gone (docs/operations.md "SundialRedisDataLost"). */
export interface DataLoss {
  prefix: string;
  /** when the lost data's marker was written (ms since the epoch): the first start on that data */
  since: number;
  message: string;
  fix: string;
}

/**
 * Redis losing Sundial's data (a restart without persistence, a FLUSHALL, a failover to an empty replica)
 * would otherwise go unnoticed: the next read finds nothing and answers a miss. `P:epoch` is written once,
 * by the first process that finds it missing; each process remembers the value it saw. A later look that
 * finds none, or another one, is a loss; the marker and `P:partitions` are then written anew (as at a
 * first start) and the new marker is remembered, so one loss is told once per process. A repartition,
 * a failover that kept the data and a reconnect leave `P:epoch` as it was: they are no loss.
 */
export class DataMarker {
  private seen: string | null = null;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: SundialKeys,
  ) {}

  /**
   * Resolves the loss when the marker this process saw is gone or replaced, else null (the first look
   * only records what it finds). Rejects when Redis does not answer: nothing is concluded then.
   */
  async check(): Promise<DataLoss | null> {
    const found = await this.redis.get(this.keys.dataMarker);
    const before = this.seen;
    if (found !== null && (before === null || found === before)) {
      this.seen = found;
      return null;
    }
    this.seen = found ?? (await this.record());
    if (before === null) return null;
    await this.redis.set(this.keys.partitionCount, String(this.keys.partitions), 'NX');
    return dataLoss(this.keys.prefix, before);
  }

  /** Writes a marker unless there is one; resolves the one there. */
  private async record(): Promise<string> {
    const mine = `${Date.now()}-${randomBytes(6).toString('hex')}`;
    await this.redis.set(this.keys.dataMarker, mine, 'NX');
    return (await this.redis.get(this.keys.dataMarker)) ?? mine;
  }
}

function dataLoss(prefix: string, marker: string): DataLoss {
  const since = Number(marker.split('-')[0]);
  return {
    prefix,
    since,
    message:
      `Redis lost Sundial's data under prefix '${prefix}' (first written ${new Date(since).toISOString()}): ` +
      'it restarted without persistence, was flushed, or failed over to an empty replica. Every timer ' +
      'created before is gone; @DistributedCron and schedules-file rows are registered again',
    fix:
      'restore Redis from a backup, or recreate the timers created through the API; turn on AOF ' +
      '(appendonly yes, docs/operations.md "Redis settings") so that a restart keeps them',
  };
}

import { randomBytes } from 'node:crypto';
import type { SundialKeys } from '../store/keys';
import type { RedisClient } from './connection';

/** What a process noticed: the data it saw under its prefix is gone (docs/operations.md "SundialRedisDataLost"). */
export interface DataLoss {
  prefix: string;
  /** when the lost data's marker was written (ms since the epoch): the first start on that data */
  since: number;
  /** the lost data's marker (`<ms>-<random>`): names this loss */
  marker: string;
  message: string;
  fix: string;
  /**
   * whether this process published the `reset` event: it wrote the new marker (its `SET NX` won); every
   * other process that notices the same loss found that marker there and publishes nothing
   */
  reset: boolean;
}

/**
 * Redis losing Sundial's data (a restart without persistence, a FLUSHALL, a failover to an empty replica)
 * would otherwise go unnoticed: the next read finds nothing and answers a miss. `P:epoch` is written once,
 * by the first process that finds it missing; each process remembers the value it saw. A later look that
 * finds none, or another one, is a loss; the marker and `P:partitions` are then written anew (as at a
 * first start) and the new marker is remembered, so one loss is told once per process. The one process
 * whose `SET NX` wrote the new marker publishes a `reset` event (`count` 0), so that @DistributedCron
 * and schedules-file rows are registered again: one loss, one reset, however many processes notice it.
 * A repartition, a failover that kept the data and a reconnect leave `P:epoch` as it was: no loss.
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
    const mine = found === null ? await this.record() : null;
    this.seen = found ?? mine?.marker ?? null;
    if (before === null) return null;
    await this.redis.set(this.keys.partitionCount, String(this.keys.partitions), 'NX');
    // Best effort: a reset that could not be published leaves the rows to the next boot, not the line unsaid.
    const reset = mine?.written
      ? await this.publishReset().then(
          () => true,
          () => false,
        )
      : false;
    return dataLoss(this.keys.prefix, before, reset);
  }

  /** Writes a marker unless there is one; resolves the one there, and whether it is the one written. */
  private async record(): Promise<{ marker: string; written: boolean }> {
    const mine = `${Date.now()}-${randomBytes(6).toString('hex')}`;
    const written = (await this.redis.set(this.keys.dataMarker, mine, 'NX')) === 'OK';
    return { marker: written ? mine : ((await this.redis.get(this.keys.dataMarker)) ?? mine), written };
  }

  /** What a global `cancelAll()` publishes: the registrars write their rows again (docs/spec.md §4.1). */
  private async publishReset(): Promise<void> {
    const reset = { type: 'reset', id: '', key: '', version: 0, kind: null, at: Date.now(), count: 0 };
    await this.redis.publish(this.keys.eventsChannel, JSON.stringify(reset));
  }
}

function dataLoss(prefix: string, marker: string, reset: boolean): DataLoss {
  const since = Number(marker.split('-')[0]);
  return {
    prefix,
    since,
    marker,
    message:
      `Redis lost Sundial's data under prefix '${prefix}' (first written ${new Date(since).toISOString()}): ` +
      'it restarted without persistence, was flushed, or failed over to an empty replica. Every timer ' +
      'created before is gone; @DistributedCron and schedules-file rows are registered again',
    fix:
      'restore Redis from a backup, or recreate the timers created through the API; turn on AOF ' +
      '(appendonly yes, docs/operations.md "Redis settings") so that a restart keeps them',
    reset,
  };
}

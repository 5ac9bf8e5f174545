import type { Timer, TimerStatus } from '@sundial/core';
import type { ChainableCommander } from 'ioredis';
import type { RedisClient } from '../infra/connection';
import type { SundialKeys } from '../store/keys';
import { decodeRow, statusOf } from '../store/row';

/** A partition of a layout (during a repartition, reads also walk the old layout's). */
export type PartitionRef = readonly [SundialKeys, number];

/** A key with the partition whose index it was read in: its row is beside it, `<base>t:<key>`. */
export interface IndexedKey {
  key: string;
  at: PartitionRef;
}

/** The rows of `keys` (null: gone since its key was read), in their order. */
export async function readRows(redis: RedisClient, keys: readonly IndexedKey[]): Promise<(Timer | null)[]> {
  const replies = await perPartition(redis, keys, (pipeline, row) => pipeline.hgetall(row));
  return replies.map((reply, i) => {
    const fields = reply as Record<string, string> | null;
    return fields?.id === undefined ? null : decodeRow({ ...fields, key: keys[i].key });
  });
}

/** The keys whose row has `status` (field `s`; `id` tells a row from none), in their order. */
export async function keysWithStatus(
  redis: RedisClient,
  keys: readonly IndexedKey[],
  status: TimerStatus,
): Promise<IndexedKey[]> {
  const replies = await perPartition(redis, keys, (pipeline, row) => pipeline.hmget(row, 's', 'id'));
  return keys.filter((_, i) => {
    const reply = replies[i] as (string | null)[] | null;
    return reply !== null && reply[1] !== null && statusOf(reply[0]) === status;
  });
}

/**
 * Sends `command` for the row of each key: one pipeline per partition, the partitions in parallel — on a
 * Redis Cluster a pipeline must stay on one node, and the partitions are spread over the primaries.
 * The replies come back in the order of `keys`; null for a key a cancelAll's scope record covers (its
 * row is cancelled, not yet settled: includes/scope-records.lua), looked for when the pipeline found one.
 */
async function perPartition(
  redis: RedisClient,
  keys: readonly IndexedKey[],
  command: (pipeline: ChainableCommander, row: string) => void,
): Promise<unknown[]> {
  const byBase = new Map<string, number[]>();
  keys.forEach(({ at: [layout, n] }, i) => {
    const base = layout.base(n);
    const indexes = byBase.get(base);
    if (indexes) indexes.push(i);
    else byBase.set(base, [i]);
  });
  const replies: unknown[] = [];
  await Promise.all(
    [...byBase].map(async ([base, indexes]) => {
      const pipeline = redis.pipeline();
      for (const i of indexes) command(pipeline, `${base}t:${keys[i].key}`);
      pipeline.exists(`${base}scm`);
      const results = (await pipeline.exec()) ?? [];
      // (SMISMEMBER only with a record open: only `cancelAllRecords` needs the ACL user to allow it)
      const covered =
        results.pop()?.[1] === 1
          ? await redis.smismember(`${base}scm`, ...indexes.map((i) => keys[i].key))
          : undefined;
      results.forEach(([error, reply], j) => {
        if (error) throw error;
        replies[indexes[j]] = covered?.[j] === 1 ? null : reply;
      });
    }),
  );
  return replies;
}

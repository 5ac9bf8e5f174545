import type Redis from 'ioredis';
import { dueOfSlot, nextCronOccurrence } from '@sundial/core';

/** The Redis side of `downFor`: each row as if scheduled `ms` earlier, its first slot not run yet. */
export async function backdateRows(raw: Redis, prefix: string, ms: number): Promise<void> {
  for (const hash of await raw.keys(`${prefix}*t:*`)) {
    const row = await raw.hgetall(hash);
    const key = hash.slice(hash.indexOf('}:t:') + 4);
    const scheduledAt = Number(row.sa) - ms;
    const kind = row.k ?? 'once'; // a default the row leaves out (docs/design.md "Row values")
    const slot =
      kind === 'cron' ? nextCronOccurrence(row.cr, row.tz, scheduledAt) : Number(row.ds ?? row.d) - ms;
    const due =
      kind === 'once' ? slot : dueOfSlot({ key, jitter: row.jt ? Number(row.jt) : undefined }, slot);
    await raw.hset(
      hash,
      'sa',
      String(scheduledAt),
      'd',
      String(due),
      ...(row.ds ? ['ds', String(slot)] : []),
      ...['st', 'ea'].flatMap((field) => (row[field] ? [field, String(Number(row[field]) - ms)] : [])),
    );
    const base = hash.slice(0, hash.indexOf('}:t:') + 2);
    await raw.zadd(`${base}due`, due, key);
    await raw.publish(`${base}wake`, String(due));
  }
}

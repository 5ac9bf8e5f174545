import type { Redis } from 'ioredis';
import type { Notification } from '../src/outbox';

/** The notifications of `kind` the replicas sent, read from the app's outbox list, in the order sent. */
export async function sentOf(redis: Redis, kind: Notification['kind']): Promise<Notification[]> {
  return (await redis.lrange('reminders:outbox', 0, -1))
    .map((line) => JSON.parse(line) as Notification)
    .filter((notification) => notification.kind === kind);
}

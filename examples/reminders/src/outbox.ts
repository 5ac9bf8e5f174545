import type { Redis } from 'ioredis';

/**
 * A notification the app sends: a due reminder, a digest (and that one is being composed), a heartbeat;
 * with FOLLOWUPS_ENABLED (followup.service.ts) a follow-up and a sweep.
 */
export interface Notification {
  kind: 'reminder' | 'digest' | 'digest.started' | 'heartbeat' | 'followup' | 'sweep';
  /** the slot or due time it was for (epoch ms) */
  due: number;
  /** the replica that sent it */
  replica: string;
  entity?: string;
  text?: string;
  /** when it was sent (epoch ms; reminders and follow-ups): `at - due` is the run's lateness */
  at?: number;
}

/** Where notifications go: a Redis list in production (a real app would call its mailer here). */
export abstract class Outbox {
  abstract send(notification: Notification): Promise<void>;
  abstract all(): Promise<Notification[]>;
}

export class RedisOutbox extends Outbox {
  constructor(
    private readonly redis: Redis,
    private readonly list = 'reminders:outbox',
  ) {
    super();
  }

  async send(notification: Notification): Promise<void> {
    await this.redis.rpush(this.list, JSON.stringify(notification));
  }

  async all(): Promise<Notification[]> {
    return (await this.redis.lrange(this.list, 0, -1)).map((line) => JSON.parse(line) as Notification);
  }
}

/** For tests on the testing module: the same contract, kept in memory. */
export class MemoryOutbox extends Outbox {
  private readonly sent: Notification[] = [];

  async send(notification: Notification): Promise<void> {
    this.sent.push(notification);
  }

  async all(): Promise<Notification[]> {
    return [...this.sent];
  }
}

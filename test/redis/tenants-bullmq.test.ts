import { Injectable } from '@nestjs/common';
import { BullModule, InjectQueue, Processor, WorkerHost } from '@nestjs/bullmq';
import { Test, type TestingModule } from '@nestjs/testing';
import { type JsonValue } from '@sundial/core';
import { OnTimer, SundialModule, SundialWorkerModule, Timers } from '@sundial/client';
import { type RedisServer, startRedis, waitFor } from '@sundial/testing/harness';
import type { Job, Queue } from 'bullmq';
import Redis from 'ioredis';

@Injectable()
class Reminders {
  readonly ran: JsonValue[] = [];

  @OnTimer('remind')
  remind(payload: JsonValue): void {
    this.ran.push(payload);
  }
}

/** The app's own BullMQ queue, beside Sundial's, on the app's BullModule.forRoot (prefix `bull`). */
@Processor('emails')
class Emails extends WorkerHost {
  readonly sent: string[] = [];
  constructor(@InjectQueue('emails') readonly queue: Queue) {
    super();
  }

  process(job: Job<{ to: string }>): Promise<void> {
    this.sent.push(job.data.to);
    return Promise.resolve();
  }
}

/**
 * An app with its own BullMQ queues (BullModule.forRoot with prefix `bull`, the default, and settings
 * of its own) on the Redis Sundial uses (docs/operations.md "Several installations on one Redis"): the
 * app's forRoot does not move Sundial's fire queues, Sundial's prefix does not move the app's queues,
 * and each keeps to its own keys.
 */
describe("Sundial beside an app's own BullMQ queues on one Redis", () => {
  let redis: RedisServer;
  let app: TestingModule | undefined;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await app?.close();
    await redis.stop();
  });

  it('both run; their keys stay under their own prefixes', async () => {
    app = await Test.createTestingModule({
      imports: [
        BullModule.forRoot({
          prefix: 'bull',
          connection: { url: redis.url },
          defaultJobOptions: { removeOnComplete: false, attempts: 3 },
        }),
        BullModule.registerQueue({ name: 'emails' }),
        SundialModule.forRoot({ connection: redis.url, prefix: 'bullmates', partitions: 2 }),
        SundialWorkerModule.forRoot({ prefix: 'bullmates', partitions: 2, dispatch: true }),
      ],
      providers: [Reminders, Emails],
    }).compile();
    await app.init();
    const emails = app.get(Emails);
    await emails.queue.add('send', { to: 'ada@example.com' });
    const timers = app.get(Timers);
    for (const n of [1, 2, 3])
      await timers.schedule({ key: `r:${n}`, handler: 'remind', payload: n, delay: 50 });

    const reminders = app.get(Reminders);
    await waitFor(() => reminders.ran.length === 3 && emails.sent.length === 1, { what: 'both queues' });
    expect(reminders.ran.sort()).toEqual([1, 2, 3]);
    expect(emails.sent).toEqual(['ada@example.com']);

    const raw = new Redis(redis.url);
    try {
      const names = await raw.keys('*');
      // Sundial's fire queues are under its prefix only; the app's queue under `bull` only.
      expect(names.filter((name) => name.includes('sundial-fire-'))).not.toHaveLength(0);
      expect(
        names.filter((name) => name.includes('sundial-fire-') && !name.startsWith('bullmates:')),
      ).toEqual([]);
      expect(names.filter((name) => name.includes(':emails:') && !name.startsWith('bull:emails:'))).toEqual(
        [],
      );
      expect(names.filter((name) => !/^(bull:emails:|bullmates:)/.test(name))).toEqual([]);
    } finally {
      await raw.quit();
    }
  });
});

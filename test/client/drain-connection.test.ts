import { Injectable, type LoggerService } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { OnTimer, SundialModule, SundialWorkerModule, Timers } from '@sundial/client';
import { startRedis, waitFor } from '@sundial/testing/harness';

/** A lease short enough that BullMQ's stalled check and lock renewal (every lease) tick during the drain. */
const LEASE_MS = 500;

@Injectable()
class Slow {
  started = false;
  release = (): void => undefined;

  @OnTimer('slow')
  async run(): Promise<void> {
    this.started = true;
    await new Promise<void>((resolve) => (this.release = resolve));
  }
}

/**
 * SundialWorkerModule's drain (docs/spec.md §4.6): a handler still running at the app's close keeps its
 * grace, and the fire queues' Workers — which wait for it — keep the connection BullMQ was given, their
 * own main connection (BullMQ duplicates only the blocking one). It was closed beside the drain: each
 * tick of their stalled check and lock renewal during the grace failed, logged `fire worker of partition
 * N: Connection is closed.` as errors at a clean shutdown (npm run upgrade-check's "slow" timer).
 */
describe('SundialWorkerModule: a run that outlasts the start of the drain', () => {
  it('keeps the fire queues’ connection until the drain ends: no error logged, the run recorded', async () => {
    const server = await startRedis();
    const errors: string[] = [];
    const logger: LoggerService = {
      log: () => undefined,
      warn: () => undefined,
      error: (message: unknown) => void errors.push(String(message)),
    };
    try {
      const module = await Test.createTestingModule({
        imports: [
          SundialModule.forRoot({ connection: server.url, prefix: 'drain' }),
          SundialWorkerModule.forRoot({ prefix: 'drain', dispatch: true, leaseMs: LEASE_MS }),
        ],
        providers: [Slow],
      }).compile();
      module.useLogger(logger);
      const app = await module.init();
      const slow = app.get(Slow);
      await app.get(Timers).schedule({ key: 'slow', handler: 'slow', delay: 0, removeOnComplete: false });
      await waitFor(() => slow.started, { what: 'the run' });
      const closing = app.close();
      // deadline: three leases of the drain, real time, for the stalled check and renewals to tick
      await new Promise((resolve) => setTimeout(resolve, 3 * LEASE_MS));
      slow.release();
      await closing;
      expect(errors).toEqual([]);
      const check = await Test.createTestingModule({
        imports: [SundialModule.forRoot({ connection: server.url, prefix: 'drain' })],
      }).compile();
      const reader = await check.init();
      try {
        expect(await reader.get(Timers).get('slow')).toMatchObject({ status: 'completed', runCount: 1 });
      } finally {
        await reader.close();
      }
    } finally {
      await server.stop();
    }
  });
});

import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  DistributedCron,
  SundialHealthIndicator,
  SundialHealthModule,
  SundialModule,
  SundialWorkerModule,
  Timers,
} from '@sundial/client';
import { freePort, waitFor, within } from '@sundial/testing/harness';

/** The boot's wait for Redis: short, since Nest lets no shutdown hook run before the boot has settled. */
const START_WAIT_MS = 2_000;
/** After that wait, the close itself: the worker's drain with nothing running, and the connections. */
const CLOSE_DEADLINE_MS = START_WAIT_MS + 8_000;

@Injectable()
class Digest {
  @DistributedCron('digest', '0 9 * * *')
  digest(): void {}
}

/**
 * A user's app closed (`app.close()`, a signal under enableShutdownHooks) while its boot waits for a Redis
 * that does not answer, on each topology: the close settles, the health indicator says down before and
 * after (never up), and the calls answer `disposed` after. Nest 12 runs no shutdown hook before `init()`
 * has settled: the close waits for the boot's `startWaitMs` first (docs/spec.md §5.1).
 */
describe('app.close() while the boot waits for Redis', () => {
  it.each([
    ['one node', (port: number) => `redis://127.0.0.1:${port}`, 'plain'],
    ['a Redis Cluster', (port: number) => `redis+cluster://127.0.0.1:${port}`, 'spread'],
    ['Sentinel', (port: number) => `redis+sentinel://127.0.0.1:${port}/sundial`, 'plain'],
  ] as const)(
    'on %s: settles, health down throughout, calls refused after',
    async (_, url, tagging) => {
      const connection = url(await freePort()); // nothing listens there
      const lines: string[] = [];
      const record = (line: string) => void lines.push(line);
      const logger = { error: record, warn: record, info: record, debug: () => undefined };
      const app = await Test.createTestingModule({
        imports: [
          SundialModule.forRoot({ connection, prefix: 'cdb', logger, startWaitMs: START_WAIT_MS }),
          SundialWorkerModule.forRoot({ prefix: 'cdb', tagging, dispatch: true }),
          SundialHealthModule,
        ],
        providers: [Digest],
      }).compile();
      const booted = app.init().then(
        () => 'booted',
        (error: Error) => error.message,
      );
      await waitFor(() => lines.some((line) => line.startsWith('waiting up to')), { what: 'the wait' });
      const health = app.get(SundialHealthIndicator);
      expect(await health.isHealthy()).toMatchObject({ sundial: { status: 'down', worker: 'idle' } });
      await within(app.close(), CLOSE_DEADLINE_MS, 'the close'); // deadline
      expect(await booted).toMatch(`Redis did not answer within ${START_WAIT_MS} ms at start`);
      expect(await health.isHealthy()).toMatchObject({ sundial: { status: 'down', worker: 'stopping' } });
      await expect(app.get(Timers).get('digest')).rejects.toMatchObject({ reason: 'disposed' });
    },
    30_000,
  );
});

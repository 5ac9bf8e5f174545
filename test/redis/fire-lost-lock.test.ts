import { FireWorkerErrors } from '@sundial/redis';
import { type RedisServer, startRedis, waitFor } from '@sundial/testing';
import { Queue, Worker } from 'bullmq';

/** BullMQ renews a lock every half of it: a renewal comes 100 ms after the lock is gone. */
const LOCK_MS = 200;

interface Line {
  level: 'error' | 'warn' | 'info';
  message: string;
}

/**
 * A fire job whose BullMQ lock is gone — as after a Redis frozen for longer than the lock: its key
 * expired — makes BullMQ's Worker emit `could not renew lock for job …` and, at its finish,
 * `Missing lock for job … moveToFinished`. Sundial records its runs itself (docs/spec.md §3.8), so a
 * fire consumer says that once as a warn, not BullMQ's raw errors at error level; any other error of
 * the Worker stays an error.
 */
describe("a fire consumer's lost BullMQ lock", () => {
  let server: RedisServer;
  beforeAll(async () => (server = await startRedis()));
  afterAll(() => server?.stop());

  it('is one warn saying what happened; an unexpected error is still an error', async () => {
    const connection = { url: server.url };
    const queue = new Queue('fire-lock', { connection });
    let release: (() => void) | undefined;
    const worker = new Worker('fire-lock', () => new Promise<void>((resolve) => (release = resolve)), {
      connection,
      lockDuration: LOCK_MS,
      autorun: false,
    });
    const lines: Line[] = [];
    const errors = new FireWorkerErrors('Sundial runner, partition 0', {
      error: (message) => lines.push({ level: 'error', message }),
      warn: (message) => lines.push({ level: 'warn', message }),
      info: (message) => lines.push({ level: 'info', message }),
    });
    const raw: string[] = [];
    worker.on('error', (error) => {
      raw.push(error.message);
      errors.recoversWith(worker, 'error').error(error); // as SundialWorkerModule's processor does
    });
    try {
      void worker.run();
      await queue.add('fire', {}, { jobId: 'p0-1' });
      await waitFor(() => release !== undefined, { what: 'the job running' });
      const redis = await queue.getBackend().client;
      expect(await redis.get('bull:fire-lock:p0-1:lock')).not.toBeNull();
      await redis.del('bull:fire-lock:p0-1:lock'); // the lock expired, as during a freeze
      await waitFor(() => raw.some((m) => m.startsWith('could not renew lock for job p0-1')), {
        what: 'the renewal refused',
      });
      release?.();
      await waitFor(() => raw.some((m) => m.startsWith('Missing lock for job p0-1')), {
        what: 'the finish refused',
      });

      expect(lines.filter((line) => line.level === 'error')).toEqual([]);
      expect(lines).toEqual([expect.objectContaining({ level: 'warn' })]);
      expect(lines[0].message).toMatch(
        /^Sundial runner, partition 0: fire job p0-1 lost its BullMQ lock .*recorded by Sundial itself/,
      );
      errors.error(new Error('ERR unknown command'));
      expect(lines[1]).toEqual({
        level: 'error',
        message: 'Sundial runner, partition 0: ERR unknown command',
      });
    } finally {
      await worker.close(true);
      await queue.close();
    }
  });
});

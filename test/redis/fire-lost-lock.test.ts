import { FireWorkerErrors } from '@sundial/redis';
import { type RedisServer, startRedis, waitFor } from '@sundial/testing/harness';
import { Queue, Worker } from 'bullmq';

/** BullMQ renews a lock every half of it: a renewal comes 100 ms after the lock is gone. */
const LOCK_MS = 200;
const LOCK_KEY = 'bull:fire-lock:p0-1:lock';

interface Line {
  level: 'error' | 'warn' | 'info';
  message: string;
}

/**
 * A fire job whose BullMQ lock is gone — as after a Redis frozen for longer than the lock: its key
 * expired — makes BullMQ's Worker emit `could not renew lock for job …` and, at its finish,
 * `Missing lock for job … moveToFinished`; one whose lock another worker holds — its own worker stopped
 * or starved past the lock, BullMQ's stalled check handed the job on — `Lock mismatch for job … Cmd
 * moveToFinished from active` at its finish, or `Missing key for job … moveToFinished` once that other
 * worker finished it (test/cluster/worker-stopped.test.ts saw both as error lines). Sundial records its runs itself (docs/spec.md §3.8), so a
 * fire consumer says that once as a warn, not BullMQ's raw errors at error level; any other error of
 * the Worker stays an error.
 */
describe("a fire consumer's lost BullMQ lock", () => {
  let server: RedisServer;
  beforeAll(async () => (server = await startRedis()));
  afterAll(() => server?.stop());

  /**
   * A job of a Worker that reports its errors through FireWorkerErrors, its lock taken by `lose`; the job
   * then finishes, and BullMQ refuses the finish with `finishWords`. Returns the lines logged.
   */
  async function lostLock(
    lose: (redis: Awaited<ReturnType<Queue['getBackend']>['client']>) => Promise<unknown>,
    finishWords: string,
  ) {
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
      expect(await redis.get(LOCK_KEY)).not.toBeNull();
      await lose(redis);
      await waitFor(() => raw.some((m) => m.startsWith('could not renew lock for job p0-1')), {
        what: 'the renewal refused',
      });
      release?.();
      await waitFor(() => raw.some((m) => m.startsWith(`${finishWords} for job p0-1`)), {
        what: 'the finish refused',
      });
      return { lines, errors };
    } finally {
      await worker.close(true);
      await queue.obliterate({ force: true });
      await queue.close();
    }
  }

  const saysSo = (lines: Line[]) => {
    expect(lines.filter((line) => line.level === 'error')).toEqual([]);
    expect(lines).toEqual([expect.objectContaining({ level: 'warn' })]);
    expect(lines[0].message).toMatch(
      /^Sundial runner, partition 0: fire job p0-1 lost its BullMQ lock .*recorded by Sundial itself/,
    );
  };

  it('expired: one warn saying what happened; an unexpected error is still an error', async () => {
    // the lock expired, as during a freeze
    const { lines, errors } = await lostLock((redis) => redis.del(LOCK_KEY), 'Missing lock');
    saysSo(lines);
    errors.error(new Error('ERR unknown command'));
    expect(lines[1]).toEqual({ level: 'error', message: 'Sundial runner, partition 0: ERR unknown command' });
  });

  it("another worker's (the job handed on by the stalled check): one warn, no error", async () => {
    const { lines } = await lostLock((redis) => redis.set(LOCK_KEY, 'another-worker-token'), 'Lock mismatch');
    saysSo(lines);
  });

  it('gone (handed on and finished by another worker): one warn, no error', async () => {
    const { lines } = await lostLock((redis) => redis.del(LOCK_KEY, 'bull:fire-lock:p0-1'), 'Missing key');
    saysSo(lines);
  });
});

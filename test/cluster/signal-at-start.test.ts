import {
  childOutput,
  CommandGate,
  DIST,
  ensureBuilt,
  type RedisServer,
  spawnOwned,
  startRedis,
} from '@sundial/testing/harness';
import { join } from 'node:path';

/** How late each reply of the slow Redis comes: the shutdown waits several of them, the start none. */
const SLOW_REPLY_MS = 300;

/**
 * A SIGTERM (a rollout, Ctrl-C under npm start) that reaches an app while `app.listen` is still starting
 * its service, on a Redis that answers slowly. The start is held at a known point — its first Redis
 * Function load, held by a CommandGate — the app is sent SIGTERM, then Redis answers, each reply
 * SLOW_REPLY_MS late: the shutdown closes the connections the start is using, and closes them one after
 * another at Redis's pace. It used to log a fatal `could not start: Connection is closed.` (the start
 * failing at once on a closed connection) and exit 1; a signal during the start is a shutdown like any
 * other: its lines, exit 0. The two apps' cases run side by side (`it.concurrent`), each through a gate
 * of its own: most of each is waiting on the slow replies.
 */
describe('apps sent SIGTERM while starting', () => {
  let redis: RedisServer;
  /** every case's gate, stopped after the suite (jest runs no afterEach for an `it.concurrent` case) */
  const gates: CommandGate[] = [];
  beforeAll(async () => {
    [redis] = await Promise.all([startRedis(), ensureBuilt()]);
  }, 180_000);
  afterAll(async () => {
    await Promise.all(gates.map((gate) => gate.stop()));
    await redis?.stop();
  });

  it.concurrent.each(['scheduler', 'worker'])(
    '%s: shuts down cleanly, exit 0, with no fatal line',
    async (app) => {
      const gate = await CommandGate.start({ port: redis.port }, /FUNCTION/i);
      gates.push(gate);
      const child = spawnOwned(process.execPath, [join(DIST, 'apps', app, 'src', 'main.js')], {
        env: { ...process.env, REDIS_URL: gate.url, PORT: '0', LOG_LEVEL: 'info' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const output = childOutput(child);
      await gate.held; // the start waits there: inside app.listen, after Redis answered its first probe
      child.kill('SIGTERM');
      gate.release({ replyDelayMs: SLOW_REPLY_MS });
      expect(await output.ended).toEqual({ code: 0, signal: null });
      const records = output.lines.map((line) => JSON.parse(line) as { level: string; msg: string });
      expect(records.filter((record) => record.level === 'fatal' || record.level === 'error')).toEqual([]);
      const messages = records.map((record) => record.msg);
      expect(messages).toEqual(expect.arrayContaining(['shutting down', 'shut down cleanly']));
      expect(messages).not.toContain(`${app} listening`);
    },
    30_000,
  );
});

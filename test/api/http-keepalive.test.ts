import { Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import {
  type AppProcess,
  clusterEnv,
  connects,
  ensureBuilt,
  killAll,
  type RedisServer,
  spawnApp,
  startRedis,
  waitFor,
  within,
} from '@sundial/testing/harness';

/** SUNDIAL_HTTP_KEEPALIVE_MS given the worker */
const SHORT_MS = 300;
/** Node keeps an idle socket this long past the keep-alive it announces (server.keepAliveTimeoutBuffer) */
const BUFFER_MS = new Server().keepAliveTimeoutBuffer;
/** Node's own keep-alive, which the apps had: the short one must close well before it would */
const NODE_DEFAULT_MS = 5_000;
/** libuv starts a timer from the loop's cached time, a few ms before the request was read */
const TIMER_SLACK_MS = 20;
/** a liveness bound on a loaded 2-core host: an answer, a close, an exit */
const DEADLINE_MS = 15_000; // deadline

/** A raw HTTP/1.1 connection: the whole answers it got (their headers) and when, when the app closed it. */
interface Connection {
  socket: Socket;
  /** `100 Continue` came */
  continued: () => boolean;
  answers: Record<string, string>[];
  answeredAt: number[];
  /** resolves with the time the `n`th whole answer came */
  answered: (n: number) => Promise<number>;
  closed: Promise<number>;
}

function connection(port: number): Connection {
  const socket = connect(port, '127.0.0.1');
  let unread = Buffer.alloc(0);
  let continued = false;
  const answers: Record<string, string>[] = [];
  const answeredAt: number[] = [];
  socket.on('data', (chunk: Buffer) => {
    unread = Buffer.concat([unread, chunk]);
    for (;;) {
      const split = unread.indexOf('\r\n\r\n');
      if (split < 0) return;
      const [status, ...lines] = unread.subarray(0, split).toString('latin1').split('\r\n');
      const headers = Object.fromEntries(
        lines.map((line) => [
          line.slice(0, line.indexOf(':')).toLowerCase(),
          line.slice(line.indexOf(':') + 1).trim(),
        ]),
      );
      const end = split + 4 + Number(headers['content-length'] ?? 0);
      if (unread.length < end) return;
      unread = unread.subarray(end);
      if (status === 'HTTP/1.1 100 Continue') continued = true;
      else {
        answeredAt.push(performance.now());
        answers.push(headers);
      }
    }
  });
  const closed = new Promise<number>((resolve) => socket.on('close', () => resolve(performance.now())));
  socket.on('error', () => undefined); // a reset is told by 'close' as well
  const answered = (n: number): Promise<number> =>
    waitFor(() => answeredAt[n - 1], { timeoutMs: DEADLINE_MS, what: `answer ${n}`, intervalMs: 5 });
  return { socket, continued: () => continued, answers, answeredAt, answered, closed };
}

/** The HTTP timeouts an app's `<app> listening` line says it runs with. */
function listeningTimeouts(app: AppProcess): { keepAliveMs?: number; headersTimeoutMs?: number } {
  const line = app.stdout.find((text) => text.includes(`"msg":"${app.name} listening"`));
  const { keepAliveMs, headersTimeoutMs } = JSON.parse(line!) as Record<string, number>;
  return { keepAliveMs, headersTimeoutMs };
}

const port = (app: AppProcess): number => Number(new URL(app.url).port);

/**
 * docs/spec.md §5.4 SUNDIAL_HTTP_KEEPALIVE_MS, docs/operations.md "Behind a load balancer": both apps keep
 * an idle connection 65 s unless told (above the 60 s nginx and AWS ALBs keep theirs), its headers
 * timeout 1 s above; a short one set closes an idle connection after it. Before, both had Node's 5 s, and
 * a proxy reusing a connection as the app closed it answered 502. Real processes, real sockets.
 */
describe('the apps’ HTTP keep-alive', () => {
  let redis: RedisServer;
  let scheduler: AppProcess;
  let worker: AppProcess;

  beforeAll(async () => {
    [redis] = await Promise.all([startRedis(), ensureBuilt()]);
    const env = clusterEnv(redis.url);
    [scheduler, worker] = await Promise.all([
      spawnApp('scheduler', 'scheduler', env),
      spawnApp('worker', 'worker', { ...env, SUNDIAL_HTTP_KEEPALIVE_MS: String(SHORT_MS) }),
    ]);
  }, 180_000); // deadline: two app boots and maybe a build

  afterAll(async () => {
    await killAll([scheduler, worker]);
    await redis?.stop();
  });

  it('unset, it is 65 s: the answer says `Keep-Alive: timeout=65`, the listening line 65000 and 66000', async () => {
    const kept = connection(port(scheduler));
    kept.socket.write('GET /health/live HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await kept.answered(1);
    kept.socket.destroy();
    expect(kept.answers[0]).toMatchObject({ connection: 'keep-alive', 'keep-alive': 'timeout=65' });
    expect(listeningTimeouts(scheduler)).toEqual({ keepAliveMs: 65_000, headersTimeoutMs: 66_000 });
  });

  it(`set to ${SHORT_MS} ms, an idle kept-alive connection is closed by the app after it, not before`, async () => {
    expect(listeningTimeouts(worker)).toEqual({ keepAliveMs: SHORT_MS, headersTimeoutMs: SHORT_MS + 1_000 });
    const kept = connection(port(worker));
    const sentAt = performance.now();
    kept.socket.write('GET /health/live HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    const answeredAt = await kept.answered(1);
    expect(kept.answers[0]).toMatchObject({ connection: 'keep-alive' });
    const closedAt = await within(kept.closed, DEADLINE_MS, 'the app to close the idle connection');
    // its idle time began after the request was sent; Node closes the socket its buffer past the keep-alive
    expect(closedAt - sentAt).toBeGreaterThanOrEqual(SHORT_MS + BUFFER_MS - TIMER_SLACK_MS);
    expect(closedAt - answeredAt).toBeLessThan(NODE_DEFAULT_MS + BUFFER_MS);
  });

  /**
   * A shutdown closes the connections idle then (Node's server.close()); one busy with an answer was kept
   * the whole keep-alive after it, 65 s, past the scheduler's 15 s shutdown deadline: it exited 1. The
   * request's headers are read before the SIGTERM (`100 Continue` says so), its body comes after the port
   * closed, with a second request behind it on the same connection, begun after the SIGTERM.
   */
  it(
    'a connection busy at a SIGTERM ends once its answers are done; the app exits 0',
    async () => {
      const busy = connection(port(scheduler));
      const body = JSON.stringify({ key: 'keepalive:shutdown', at: '2099-01-01T00:00:00Z', handler: 'log' });
      busy.socket.write(
        'POST /v1/timers HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
          `Content-Length: ${Buffer.byteLength(body)}\r\nExpect: 100-continue\r\n\r\n`,
      );
      await waitFor(busy.continued, { timeoutMs: DEADLINE_MS, what: 'the scheduler to read the request' });
      scheduler.kill('SIGTERM');
      await waitFor(async () => !(await connects('127.0.0.1', port(scheduler))), {
        timeoutMs: DEADLINE_MS,
        what: 'the port to close',
      });
      busy.socket.write(`${body}GET /health/live HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
      const answeredAt = await busy.answered(2);
      const closedAt = await within(busy.closed, DEADLINE_MS, 'the app to end the connection');
      // the first was begun before the SIGTERM: kept alive by its headers, ended by the app all the same
      expect(busy.answers.map(({ connection }) => connection)).toEqual(['keep-alive', 'close']);
      expect(closedAt - answeredAt).toBeLessThan(BUFFER_MS);
      expect(await within(scheduler.exited, DEADLINE_MS, 'the scheduler to exit')).toEqual({
        code: 0,
        signal: null,
      });
    },
    5 * DEADLINE_MS, // deadline: the bounds awaited one after the other
  );
});

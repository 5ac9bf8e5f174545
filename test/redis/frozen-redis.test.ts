import { type LogFields, silentLogger, SundialError, type SundialLogger } from '@sundial/core';
import { Dispatcher, Reconciler, RedisTimers, TimerRunner } from '@sundial/redis';
import { type RedisServer, redisNow, startRedis, waitFor, within } from '@sundial/testing/harness';
import { Redis } from 'ioredis';

const BOUND_MS = 300;
/** Longer than a dispatcher's announcement lasts (ANNOUNCED_FOR_MS, 15 s): the fault itself. */
const FREEZE_MS = 16_000;
/** A liveness bound, not a measurement: the call's bound and a margin for a loaded host. */
const ANSWER_DEADLINE_MS = BOUND_MS + 1_700;

/** What a call refused: its reason, its detail's code, its message. */
async function refusal(call: Promise<unknown>): Promise<{ reason: string; code?: string; message: string }> {
  const error = await within(call, ANSWER_DEADLINE_MS, 'the call').then(
    () => {
      throw new Error('the call answered while Redis was frozen');
    },
    (error: unknown) => error,
  );
  if (!(error instanceof SundialError)) throw error;
  const { reason, message } = error;
  return { reason, message, code: (error.detail as { code?: string } | undefined)?.code };
}

/**
 * A Redis that keeps its sockets open and answers nothing (frozen with SIGSTOP): every `RedisTimers`
 * call answers `unavailable` within its `commandTimeoutMs` (docs/spec.md §5.5), a write's saying its
 * outcome is unknown; once Redis answers again, a retry with the same requestId answers as the first,
 * which Redis ran late, and changes nothing more. Before the bound every call waited as long as Redis
 * stayed frozen (and so did every HTTP request of the scheduler).
 */
describe('a frozen Redis', () => {
  let server: RedisServer;
  const closers: (() => Promise<unknown>)[] = [];
  const client = (prefix: string) => {
    const timers = new RedisTimers({
      connection: server.url,
      prefix,
      logger: silentLogger,
      commandTimeoutMs: BOUND_MS,
    });
    closers.push(() => timers.dispose());
    return timers;
  };

  beforeAll(async () => {
    server = await startRedis();
  });
  afterEach(() => server.signal('SIGCONT'));
  afterAll(async () => {
    for (const close of closers.reverse()) await close();
    await server?.stop();
  });

  it('a read answers unavailable, a write outcome-unknown (one with a requestId: sent nothing but its pin); the retry runs it', async () => {
    const timers = client('started');
    await timers.connect();
    const spec = { key: 'frozen', handler: 'job', delay: 60_000 };
    server.signal('SIGSTOP');

    const read = await refusal(timers.get('frozen'));
    expect(read).toEqual({
      reason: 'unavailable',
      code: undefined,
      message: `Redis is unreachable (no answer within ${BOUND_MS} ms, commandTimeoutMs); the call changed nothing.`,
    });
    // its script sent, no answer: it may or may not have been applied
    const write = await refusal(timers.schedule({ ...spec, key: 'frozen-plain' }));
    expect(write).toMatchObject({ reason: 'unavailable', code: 'outcome-unknown' });
    expect(write.message).toMatch(/no answer within 300 ms.*may or may not have been applied/);
    // a requestId's pin is sent first, and left unanswered: no script was sent, no timer changed
    const pinned = await refusal(timers.schedule(spec, { requestId: 'r-1' }));
    expect(pinned).toMatchObject({ reason: 'unavailable', code: undefined });
    expect(pinned.message).toMatch(
      /no answer within 300 ms.*before this write was sent; the call changed no timer/,
    );

    server.signal('SIGCONT');
    const retried = await timers.schedule(spec, { requestId: 'r-1' });
    expect(retried).toMatchObject({ key: 'frozen', version: 1 });
    expect(await timers.get('frozen')).toMatchObject({ id: retried.id, version: 1 });
  });

  it("a client's first call during the freeze (its start, its event subscription) answers unavailable", async () => {
    const timers = client('first');
    timers.on('scheduled', () => undefined);
    server.signal('SIGSTOP');
    expect(await refusal(timers.list())).toMatchObject({ reason: 'unavailable', code: undefined });
    server.signal('SIGCONT');
    // its connection may still be making itself anew: answered once Redis is back, within the deadline
    const answered = () =>
      timers.list().then(
        (list) => list,
        () => undefined,
      );
    expect(await waitFor(answered, { timeoutMs: 5_000, what: 'a list' })).toMatchObject({ items: [] }); // deadline
  });

  it("a scheduler's parts close while Redis is frozen: dispatcher, reconciler (a pass under way) and client", async () => {
    const shared = { connection: server.url, prefix: 'closing', logger: silentLogger };
    const timers = client('closing');
    const dispatcher = new Dispatcher({ ...shared, pollMs: 10 }); // passes back to back, as the reconciler's
    let passes = 0;
    const observer = { reconciled: () => void passes++ };
    const reconciler = new Reconciler({ ...shared, intervalMs: 10, observer });
    await Promise.all([timers.connect(), dispatcher.start()]);
    reconciler.start();
    await waitFor(() => passes > 0, { what: 'a reconcile pass' });
    server.signal('SIGSTOP');
    await new Promise((passBegun) => setTimeout(passBegun, 50)); // the next pass (10 ms after) waits on Redis
    // Liveness bounds, not measurements: 3 s for the work under way (CLOSE_REDIS_WAIT_MS), a 1 s QUIT per
    // connection, a margin. Before, the reconciler's and the dispatcher's close waited on Redis for good.
    await within(Promise.all([reconciler.close(), dispatcher.close()]), 3_000 + 2_000 + 2_000, 'close()');
    await within(timers.dispose(), 1_000 + 1_000, 'dispose()');
  });

  /**
   * docs/spec.md §4.2: the runner's looks and the dispatcher's renewals waited behind the frozen Redis; on
   * thawing, Redis answered the looks first, against the old announcement, expired by then: the runner
   * warned "No Sundial dispatcher has run … for 15 s" (fix: deploy the scheduler), then "runs again".
   */
  it('frozen past a dispatcher announcement (15 s): the runner does not warn that no dispatcher runs', async () => {
    const lines: string[] = [];
    const keep = (message: string, _fields?: LogFields) => {
      if (/dispatcher/i.test(message)) lines.push(message);
    };
    const logger: SundialLogger = { ...silentLogger, warn: keep, info: keep };
    const shared = { connection: server.url, prefix: 'frozen', logger: silentLogger };
    const dispatcher = new Dispatcher(shared);
    closers.push(() => dispatcher.close());
    await dispatcher.start();
    const runner = new TimerRunner({ ...shared, logger, handlers: {}, dispatcherGraceMs: 300 });
    closers.push(() => runner.close(0));
    await runner.start();

    server.signal('SIGSTOP');
    await new Promise((thawAt) => setTimeout(thawAt, FREEZE_MS)); // the freeze itself, past the 15 s announcement
    server.signal('SIGCONT');
    // The dispatcher announces itself again; the runner's looks (every 100 ms, a third of its grace) then
    // see it. Nothing said meanwhile or after.
    const raw = new Redis(server.url);
    closers.push(() => raw.quit());
    const since = await redisNow(raw);
    // renewed: its score (when it lapses) is 15 s past the time it was written
    const renewed = async () =>
      (await raw.zrange(runner.keys.dispatchers, since + 14_000, '+inf', 'BYSCORE')).length > 0;
    await waitFor(renewed, { what: 'the announcement renewed' });
    const renewedAt = Date.now();
    await waitFor(() => Date.now() - renewedAt > 500, { what: 'five looks' });
    expect(lines).toEqual([]);
  });
});

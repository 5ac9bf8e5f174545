import { silentLogger, SundialError } from '@sundial/core';
import { RedisTimers } from '@sundial/redis';
import { type RedisServer, startRedis, waitFor, within } from '@sundial/testing';

const BOUND_MS = 300;
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
describe('RedisTimers calls while Redis is frozen', () => {
  let server: RedisServer;
  const clients: RedisTimers[] = [];
  const client = (prefix: string) => {
    const timers = new RedisTimers({
      connection: server.url,
      prefix,
      logger: silentLogger,
      commandTimeoutMs: BOUND_MS,
    });
    clients.push(timers);
    return timers;
  };

  beforeAll(async () => {
    server = await startRedis();
  });
  afterEach(() => server.signal('SIGCONT'));
  afterAll(async () => {
    for (const timers of clients) await timers.dispose();
    await server?.stop();
  });

  it('a read answers unavailable, a write outcome-unknown; the same requestId then answers the write Redis ran', async () => {
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
    const write = await refusal(timers.schedule(spec, { requestId: 'r-1' }));
    expect(write).toMatchObject({ reason: 'unavailable', code: 'outcome-unknown' });
    expect(write.message).toMatch(/no answer within 300 ms.*may or may not have been applied/);

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
});

import { silentLogger, SundialError } from '@sundial/core';
import { RedisTimers } from '@sundial/redis';
import { CommandGate, type RedisServer, startRedis, waitFor, within } from '@sundial/testing/harness';

const BOUND_MS = 300;
/** A liveness bound, not a measurement: the call's bound and a margin for a loaded host. */
const ANSWER_DEADLINE_MS = BOUND_MS + 1_700;
/** Far from any other due in these tests: the bytes of the write the gate holds (and only those) carry it. */
const STALE_AT = Date.UTC(2100, 0, 1);

/** What a write refused: its reason and its detail's code. */
async function refusal(call: Promise<unknown>): Promise<{ reason: string; code?: string }> {
  const error = await within(call, ANSWER_DEADLINE_MS, 'the call').then(
    () => {
      throw new Error('the call answered while its command was held');
    },
    (error: unknown) => error,
  );
  if (!(error instanceof SundialError)) throw error;
  return { reason: error.reason, code: (error.detail as { code?: string } | undefined)?.code };
}

/**
 * A write Redis did not answer within `commandTimeoutMs` is answered `outcome-unknown` (docs/spec.md
 * §5.5). ioredis kept the command on its connection and, after a reconnect, sent it again
 * (`autoResendUnfulfilledCommands`): minutes later, after the caller had moved on through another
 * client (another scheduler replica), the stale write landed over the newer state — a cancelled timer
 * came back, a reschedule was undone. Now nothing is sent after its caller was answered.
 */
describe('a write answered outcome-unknown, then its connection reset', () => {
  let server: RedisServer;
  const closers: (() => Promise<unknown>)[] = [];
  const client = (url: string, prefix: string, commandTimeoutMs = BOUND_MS) => {
    const timers = new RedisTimers({ connection: url, prefix, logger: silentLogger, commandTimeoutMs });
    closers.push(() => timers.dispose());
    return timers;
  };

  /** `prefix`'s client through a gate holding the first command that carries STALE_AT, and one direct. */
  async function clients(prefix: string, commandTimeoutMs = BOUND_MS) {
    const gate = await CommandGate.start(server, new RegExp(String(STALE_AT)));
    closers.push(() => gate.stop());
    const gated = client(gate.url, prefix, commandTimeoutMs);
    const direct = client(server.url, prefix);
    await Promise.all([gated.connect(), direct.connect()]);
    // After its reconnect ioredis sends what it kept first, then this read: answered, a resend ran.
    const answered = () =>
      waitFor(
        () =>
          gated.get('none').then(
            () => true,
            () => false,
          ),
        { timeoutMs: 5_000, what: 'a reconnect' }, // deadline
      ); // deadline
    /** Resets the gated connections (what they held is lost) and waits until they answer again. */
    const reset = Object.assign(
      async () => {
        gate.cut();
        await answered();
      },
      { cutOnly: async () => gate.cut(), answered },
    );
    return { gate, gated, direct, reset };
  }

  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(async () => {
    for (const close of closers.reverse()) await close();
    await server?.stop();
  });

  it('a reschedule, then another through another client: the newer one stays', async () => {
    const { gated, direct, reset } = await clients('reschedule');
    await direct.schedule({ key: 'k', handler: 'job', delay: 60_000 });
    expect(await refusal(gated.reschedule('k', { at: STALE_AT }))).toEqual({
      reason: 'unavailable',
      code: 'outcome-unknown',
    });
    const newer = await direct.reschedule('k', { delay: 120_000 }, { requestId: 'second' });

    await reset();
    expect(await direct.get('k')).toMatchObject({ version: newer.version, dueAt: newer.dueAt });
  });

  it('a schedule, then a cancel through another client: the timer stays cancelled', async () => {
    const { gated, direct, reset } = await clients('cancel');
    expect(await refusal(gated.schedule({ key: 'k', handler: 'job', at: STALE_AT }))).toEqual({
      reason: 'unavailable',
      code: 'outcome-unknown',
    });
    await direct.schedule({ key: 'k', handler: 'job', delay: 60_000 });
    expect(await direct.cancel('k')).toBe(true);

    await reset();
    expect(await direct.get('k')).toBeNull();
  });

  it('made while its connection was coming back: not sent once it is back', async () => {
    const { gated, direct, reset } = await clients('offline');
    await direct.schedule({ key: 'k', handler: 'job', delay: 60_000 });
    server.signal('SIGSTOP');
    try {
      await reset.cutOnly();
      // The new connection's handshake waits on the frozen Redis: the write waits in ioredis's offline queue.
      expect(await refusal(gated.reschedule('k', { at: STALE_AT }))).toEqual({
        reason: 'unavailable',
        code: 'outcome-unknown',
      });
    } finally {
      server.signal('SIGCONT');
    }
    await reset.answered();
    expect(await direct.get('k')).toMatchObject({ version: 1 });
  });

  it('still awaited when its connection resets: sent again, answered with what Redis ran', async () => {
    // A bound a reconnect fits in on a loaded host: the write is not answered before it is sent again.
    const { gate, gated, direct } = await clients('awaited', 5_000);
    await direct.schedule({ key: 'k', handler: 'job', delay: 60_000 });
    const write = gated.reschedule('k', { at: STALE_AT });
    await within(gate.held, 5_000, 'the write held'); // deadline
    gate.cut();
    expect(await within(write, 5_000, 'the write')).toMatchObject({ version: 2, dueAt: STALE_AT }); // deadline
    expect(await direct.get('k')).toMatchObject({ version: 2, dueAt: STALE_AT });
  });

  it('a retry with the same requestId after the reset runs the write once', async () => {
    const { gated, direct, reset } = await clients('retry');
    await direct.schedule({ key: 'k', handler: 'job', delay: 60_000 });
    const first = await refusal(gated.reschedule('k', { at: STALE_AT }, { requestId: 'r' }));
    expect(first.code).toBe('outcome-unknown');

    await reset();
    const retried = await gated.reschedule('k', { at: STALE_AT }, { requestId: 'r' });
    expect(retried).toMatchObject({ version: 2, dueAt: STALE_AT });
    expect(await direct.get('k')).toMatchObject({ version: 2, dueAt: STALE_AT });
  });
});

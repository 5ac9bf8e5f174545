import { silentLogger, SundialError } from '@sundial/core';
import { RedisTimers, scriptOfCall } from '@sundial/redis';
import { freePort, type RedisServer, ReplyDropper, startRedis, waitFor } from '@sundial/testing/harness';
import Redis from 'ioredis';

/** What a call refused: its reason, its detail's code, its message and fix. */
async function refusal(call: Promise<unknown>) {
  const error = await call.then(
    () => {
      throw new Error('the call answered');
    },
    (error: unknown) => error,
  );
  if (!(error instanceof SundialError)) throw error;
  const { reason, message, fix } = error;
  return { reason, message, fix, code: (error.detail as { code?: string } | undefined)?.code };
}

const spec = { key: 'k', handler: 'job', delay: 60_000 };

/**
 * docs/spec.md §5.5: what a `RedisTimers` write tells of Redis failing it is what happened to it. Sent
 * while Redis was already away (ioredis's offline queue gave it up: MaxRetriesPerRequestError), it was
 * answered "may or may not have been applied" (`outcome-unknown`): nothing of it reached Redis, so the
 * caller checked and retried for nothing. Refused by Redis (READONLY), it was said unreachable.
 */
describe('a RedisTimers call Redis failed: what it says', () => {
  let server: RedisServer;
  let proxy: ReplyDropper;
  let raw: Redis;
  const closers: (() => Promise<unknown>)[] = [];
  const client = (connection: string, prefix: string) => {
    const timers = new RedisTimers({ connection, prefix, logger: silentLogger });
    closers.push(() => timers.dispose());
    return timers;
  };

  beforeAll(async () => {
    server = await startRedis();
    proxy = await ReplyDropper.start({ port: server.port });
    raw = new Redis(server.url);
  });
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });
  afterAll(async () => {
    raw?.disconnect();
    await proxy?.stop();
    await server?.stop();
  });

  it('Redis already away: a write (and a read) answers that it changed nothing, naming the connection error', async () => {
    const away = await startRedis();
    closers.push(() => away.stop());
    const timers = client(away.url, 'away');
    await timers.connect();
    away.kill();
    const status = () => (timers as unknown as { redis: Redis }).redis.status;
    await waitFor(() => status() !== 'ready', { what: 'the client to see its connection closed' });
    const unsent = {
      reason: 'unavailable',
      code: undefined,
      message: expect.stringMatching(
        /^Redis is unreachable \(connect ECONNREFUSED 127\.0\.0\.1:\d+\); the call changed nothing\.$/,
      ),
      fix: expect.stringMatching(/nothing of the call was applied, so a retry is safe/),
    };
    expect(await refusal(timers.schedule(spec, { requestId: 'r-away' }))).toEqual(unsent);
    expect(await refusal(timers.cancel('k'))).toEqual(unsent);
    expect(await refusal(timers.get('k'))).toEqual(unsent);
  });

  it('a write whose reply was lost (Redis ran it) still answers that its outcome is unknown', async () => {
    const timers = client(proxy.url, 'lost');
    await timers.connect();
    // the reply to the schedule dropped, and the client's one reconnect refused: its retry runs out
    proxy.dropReplyTo({ matches: (sent) => scriptOfCall(sent) === 'schedule', refuseMs: 2_000 }); // deadline
    const lost = await refusal(timers.schedule(spec, { requestId: 'r-lost' }));
    expect(lost).toMatchObject({ reason: 'unavailable', code: 'outcome-unknown' });
    expect(lost.message).toMatch(/while this write was in flight: it may or may not have been applied/);
    expect(proxy.dropped).toBe(1);
    expect(await raw.keys('lost:*')).not.toEqual([]); // it was applied
  });

  it('cut off between its request id’s pin and its script: it says it changed no timer; the retry runs it once', async () => {
    const timers = client(proxy.url, 'pin');
    await timers.connect();
    // the reply to the pin dropped (Redis has set it), and the client's one reconnect refused: the call
    // ends before its script is sent. It said `outcome-unknown`: "may or may not have been applied".
    const pin = (sent: string[]) => sent[0] === 'SET' && sent[1] === 'pin:request:r-pin';
    proxy.reset();
    proxy.dropReplyTo({ matches: pin, refuseMs: 2_000 }); // deadline
    const cut = await refusal(timers.schedule(spec, { requestId: 'r-pin' }));
    expect(proxy.dropped).toBe(1);
    expect(cut).toEqual({
      reason: 'unavailable',
      code: undefined,
      message: expect.stringMatching(
        /^Redis became unreachable \(.*\) before this write was sent; the call changed no timer \(its request id .* may stay recorded for this very call\)\.$/,
      ),
      fix: expect.stringMatching(/nothing of it was applied, so a retry is safe/),
    });
    // what happened: the pin, no timer
    expect(await raw.exists('pin:request:r-pin')).toBe(1);
    expect(await raw.keys('pin:*:t:k')).toEqual([]);
    expect(await raw.keys('pin:*:q:*')).toEqual([]);
    await waitFor(async () => (await timers.get('k').catch(() => undefined)) === null, {
      what: 'the proxy to let the client in again',
      timeoutMs: 10_000, // deadline: refuseMs above, then ioredis's reconnect
    });
    const created = await timers.schedule(spec, { requestId: 'r-pin' });
    expect(await timers.schedule(spec, { requestId: 'r-pin' })).toEqual(created);
    expect(await timers.get('k')).toEqual(created);
  });

  it('Redis refusing writes for now (READONLY, a replica after a failover): changed nothing, the fix names the primary', async () => {
    const timers = client(server.url, 'replica');
    await timers.connect();
    await raw.call('REPLICAOF', '127.0.0.1', String(await freePort())); // a primary that never answers
    try {
      const refused = await refusal(timers.schedule(spec, { requestId: 'r-replica' }));
      expect(refused).toEqual({
        reason: 'unavailable',
        code: undefined,
        message: expect.stringMatching(
          /^Redis refused the call for now \(READONLY .*\); the call changed nothing\.$/,
        ),
        fix: expect.stringMatching(/replica, not the primary/),
      });
    } finally {
      await raw.call('REPLICAOF', 'NO', 'ONE');
    }
    // nothing of it ran: no timer, no pin of its request id
    expect(await timers.get('k')).toBeNull();
    expect(await raw.exists('replica:request:r-replica')).toBe(0);
  });
});

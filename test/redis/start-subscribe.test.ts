import { silentLogger } from '@sundial/core';
import { Dispatcher, TimerRunner } from '@sundial/redis';
import { type RedisServer, ReplyDropper, startRedis, waitFor } from '@sundial/testing/harness';
import { Redis } from 'ioredis';
import {
  shortenStartSubscribeForTests,
  START_SUBSCRIBE_MS,
  startSubscribeLimitMs,
} from '../../libs/redis/src/infra/subscription';

const PARTITIONS = 2;
/** Longer than ioredis keeps a command with maxRetriesPerRequest 2 (~150 ms of reconnects), then Redis is back. */
const SHORT_OUTAGE_MS = 1_500;
/** A start's wait for its subscription in the last case: START_SUBSCRIBE_MS (30 s), shortened for this suite. */
const SUBSCRIBE_LIMIT_MS = 2_500;
/** Past that wait. */
const LONG_OUTAGE_MS = 4_000;

/**
 * A dispatcher or runner started while Redis goes away just as it subscribes (its store checked, its
 * SUBSCRIBE cut before any answer by the proxy in front of a real redis-server, and connections refused
 * for a while). Before: start() failed as soon as ioredis gave the SUBSCRIBE up (maxRetriesPerRequest
 * reconnect attempts), though Redis was back a second later: the app exited 1. Now start waits for the
 * subscription through a short outage (readiness stays false meanwhile) and, past START_SUBSCRIBE_MS,
 * fails saying what it could not subscribe to and why (the app then exits 1 and is started again).
 */
describe('start() while Redis is away as it subscribes', () => {
  let server: RedisServer;
  let proxy: ReplyDropper;
  let admin: Redis;
  const closers: (() => Promise<void>)[] = [];
  const shared = { prefix: 'ss', partitions: PARTITIONS, logger: silentLogger };

  beforeAll(async () => {
    server = await startRedis();
    proxy = await ReplyDropper.start({ port: server.port });
    admin = new Redis(server.url);
  });
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
    await proxy.listening();
    proxy.reset();
  });
  afterAll(async () => {
    admin?.disconnect();
    await proxy?.stop();
    await server?.stop();
  });

  async function subscribers(channel: string): Promise<number> {
    const reply = (await admin.pubsub('NUMSUB', channel)) as (string | number)[];
    return Number(reply[1]);
  }

  function cutSubscribe(refuseMs: number): void {
    proxy.dropReplyTo({ matches: (sent) => sent[0] === 'SUBSCRIBE', refuseMs });
  }

  it('a dispatcher starts once Redis is back, its wake channels subscribed', async () => {
    cutSubscribe(SHORT_OUTAGE_MS);
    const connection = { url: proxy.url, maxRetriesPerRequest: 2 };
    const dispatcher = new Dispatcher({ ...shared, connection });
    closers.push(() => dispatcher.close());
    await dispatcher.start();
    expect(proxy.dropped).toBe(1);
    expect(await subscribers('ss:{p0}:wake')).toBe(1);
    expect(await subscribers('ss:{p1}:wake')).toBe(1);
  }, 30_000);

  it('a runner starts once Redis is back, P:abort subscribed', async () => {
    cutSubscribe(SHORT_OUTAGE_MS);
    const connection = { url: proxy.url, maxRetriesPerRequest: 2 };
    const runner = new TimerRunner({ ...shared, connection, handlers: {} });
    closers.push(() => runner.close(0));
    await runner.start();
    expect(proxy.dropped).toBe(1);
    expect(await subscribers('ss:abort')).toBe(1);
  }, 30_000);

  it('a SUBSCRIBE refused on a connection that stays up (ACL) is tried again', async () => {
    // A user with every command and key but no channel: SUBSCRIBE answers NOPERM, the connection stays.
    await admin.acl('SETUSER', 'nochan', 'on', '>pw', '~*', '+@all', 'resetchannels');
    const connection = `redis://nochan:pw@127.0.0.1:${server.port}`;
    const dispatcher = new Dispatcher({ ...shared, connection });
    closers.push(async () => {
      await dispatcher.close();
      await admin.acl('DELUSER', 'nochan');
    });
    let started = false;
    const start = dispatcher.start().then(() => (started = true));
    start.catch(() => undefined); // awaited below; a failed expectation first must not leave it unhandled
    const denials = async () => {
      const log = (await admin.acl('LOG')) as unknown[][];
      const entry = log.find((fields) => fields.includes('nochan') && fields.includes('channel'));
      return entry ? Number(entry[entry.indexOf('count') + 1]) : 0;
    };
    // Refused, and tried again (an ACL log entry counts the same denial repeated), start still waiting.
    await waitFor(async () => (await denials()) >= 2, { what: 'SUBSCRIBE refused twice' });
    expect(started).toBe(false);
    await admin.acl('SETUSER', 'nochan', 'allchannels');
    await start;
    expect(await subscribers('ss:{p0}:wake')).toBe(1);
  }, 30_000);

  it('past its bound (30 s; shortened here) a start fails saying why, and subscribes once Redis is back', async () => {
    // The bound starts wait is START_SUBSCRIBE_MS, 30 s, unless a test shortens it (this one does, so
    // that it passes in seconds; afterEach restores it).
    expect(START_SUBSCRIBE_MS).toBe(30_000);
    expect(startSubscribeLimitMs()).toBe(START_SUBSCRIBE_MS);
    shortenStartSubscribeForTests(SUBSCRIBE_LIMIT_MS);
    closers.push(async () => shortenStartSubscribeForTests());
    cutSubscribe(LONG_OUTAGE_MS);
    // ioredis gives the SUBSCRIBE up within the bound (2 reconnect attempts, not 20 in ~10 s): the start
    // then waits for Redis to be back, and says what the last attempt failed on.
    const connection = { url: proxy.url, maxRetriesPerRequest: 2 };
    const runner = new TimerRunner({ ...shared, connection, handlers: {} });
    closers.push(() => runner.close(0));
    const started = Date.now();
    await expect(runner.start()).rejects.toThrow(
      /could not subscribe to ss:abort within 2500 ms: connect ECONNREFUSED 127\.0\.0\.1:\d+$/,
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(SUBSCRIBE_LIMIT_MS);
    // Not given up: subscribed once Redis is back, should the host keep the runner rather than exit.
    await proxy.listening();
    await waitFor(async () => (await subscribers('ss:abort')) === 1, {
      timeoutMs: 10_000, // deadline
      what: 'P:abort subscribed',
    });
  }, 30_000);
});

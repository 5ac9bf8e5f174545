import { type LogFields, silentLogger, type SundialLogger } from '@sundial/core';
import { Dispatcher, TimerRunner } from '@sundial/redis';
import { type RedisServer, startRedis, waitFor } from '@sundial/testing';
import { Redis } from 'ioredis';

/** Longer than a dispatcher's announcement lasts (ANNOUNCED_FOR_MS, 15 s): the fault itself. */
const FREEZE_MS = 16_000;

/**
 * docs/spec.md §4.2: a runner warns of a prefix no dispatcher serves only when none runs. A Redis frozen
 * longer than an announcement lasts (SIGSTOP) left the runner's looks and the dispatcher's renewals
 * queued; on thawing, Redis answered the looks first, against the old announcement, expired by then: the
 * runner warned "No Sundial dispatcher has run … for 15 s" (fix: deploy the scheduler) with one running all
 * along, then "runs again". A look answered late now says nothing.
 */
describe('a frozen Redis and the runner look for dispatchers', () => {
  let server: RedisServer;
  const closers: (() => Promise<unknown>)[] = [];

  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(async () => {
    server?.signal('SIGCONT');
    for (const close of closers.reverse()) await close();
    await server?.stop();
  });

  it('no warning when the dispatcher ran all along', async () => {
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
    const thawedAt = (await raw.time()).map(Number);
    const since = thawedAt[0] * 1000 + Math.floor(thawedAt[1] / 1000);
    const announced = async () => (await raw.zrange(runner.keys.dispatchers, 0, -1, 'WITHSCORES'))[1];
    await waitFor(async () => Number(await announced()) > since + 14_000, {
      what: 'the announcement renewed',
    });
    const renewedAt = Date.now();
    await waitFor(() => Date.now() - renewedAt > 500, { what: 'five looks' });
    expect(lines).toEqual([]);
  });
});

import { Injectable } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { OnTimer, SundialModule, SundialWorkerModule, Timers } from '@sundial/client';
import { isSundialError, type JsonValue } from '@sundial/core';
import { type RedisServer, startRedis, waitFor } from '@sundial/testing/harness';

/**
 * Redis is away this long: into BullMQ's own reconnect back-off (bullmq redis-connection.js,
 * `max(min(e^attempt, 20000), 1000)` ms: 1 s six times, then 1.1, 3.0, 8.1 and 20 s, so attempts
 * ~1…6, 7.1, 10.1 and 18.2 s into an outage), past its attempt at ~10.1 s and well before the next at
 * ~18.2 s. Sundial's cadence (50 ms × attempt, at most 2 s) waits ~1 s between attempts by then.
 */
const OUTAGE_MS = 10_500;
/** Sundial's longest wait between reconnect attempts (2 s), plus the hand-off and the run. */
const RECOVERY_MS = 4_000;

@Injectable()
class Notes {
  readonly seen: { payload: JsonValue; at: number }[] = [];

  @OnTimer('note')
  note(payload: JsonValue): void {
    this.seen.push({ payload, at: Date.now() });
  }
}

/**
 * A user's Nest app whose SundialWorkerModule got its connection as a URL (SundialModule's `connection`),
 * through a Redis outage (redis-server stopped, started again on its port OUTAGE_MS later). Its fire
 * queues' BullMQ workers were made from that URL with BullMQ's own back-off: after this outage a timer
 * due as Redis came back ran only when their next attempt came (~7.7 s later), while Sundial's own
 * connections were back within a second or so. Now they reconnect at Sundial's cadence.
 */
describe("SundialWorkerModule's fire workers after a Redis outage", () => {
  let server: RedisServer;
  let app: TestingModule | undefined;

  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(async () => {
    await app?.close();
    await server?.stop();
  });

  it("take a timer due as Redis returns within Sundial's reconnect interval, not BullMQ's", async () => {
    app = await Test.createTestingModule({
      imports: [
        SundialModule.forRoot({ connection: server.url, prefix: 'rc' }),
        SundialWorkerModule.forRoot({ prefix: 'rc', dispatch: true }),
      ],
      providers: [Notes],
    }).compile();
    await app.init();
    const timers = app.get(Timers);
    const notes = app.get(Notes);
    // The workers take jobs before the outage (their blocking reads are under way); the run is recorded.
    const before = { key: 'before', handler: 'note', payload: 'before', delay: 0, removeOnComplete: false };
    await timers.schedule(before);
    await waitFor(async () => (await timers.get('before'))?.status === 'completed', {
      what: 'the run before the outage',
    });

    await server.restart(OUTAGE_MS);
    const back = Date.now();
    // Scheduled as soon as Sundial's client answers again (a call during its reconnect is `unavailable`).
    await waitFor(
      () =>
        timers
          .schedule({ key: 'after', handler: 'note', payload: 'after', delay: 0 }, { requestId: 'after-1' })
          .then(
            () => true,
            (error: unknown) =>
              isSundialError(error) && error.reason === 'unavailable' ? false : Promise.reject(error),
          ),
      { what: 'the schedule call to be answered' },
    );
    // Waited for past RECOVERY_MS, so that a failure says how late the run was (7.7 s on BullMQ's back-off).
    const ran = await waitFor(() => notes.seen.find((note) => note.payload === 'after'), {
      what: 'the run after the outage',
      timeoutMs: 20_000,
    });
    expect(ran.at - back).toBeLessThan(RECOVERY_MS);
  }, 60_000);
});

import { Injectable } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { OnTimer, SundialModule, SundialWorkerModule, Timers } from '@sundial/client';
import type { JsonValue } from '@sundial/core';
import { type RedisServer, startRedis, waitFor } from '@sundial/testing/harness';

/** Redis is away this long after the app is made. */
const OUTAGE_MS = 3_000;

@Injectable()
class Notes {
  readonly seen: JsonValue[] = [];

  @OnTimer('note')
  note(payload: JsonValue): void {
    this.seen.push(payload);
  }
}

/**
 * A user's Nest app with SundialModule and SundialWorkerModule booting while its Redis is unreachable
 * (redis-server killed with SIGKILL, started again on its port OUTAGE_MS later), as a pod started
 * during a Redis restart. Before, the boot failed within a second (the @DistributedCron pass's first
 * call answered `unavailable`), and Kubernetes would restart the pod only after its crash-loop back-off;
 * now the boot waits for Redis (up to 30 s) and the app then runs its timers. SundialModule's
 * `startWaitMs` bounds that wait for the whole app (its RedisTimers, the worker's runner and dispatcher).
 */
describe('a SundialWorkerModule app booted while Redis is unreachable', () => {
  let server: RedisServer;
  const apps: TestingModule[] = [];

  beforeAll(async () => {
    server = await startRedis();
  });
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('boots once Redis is back and runs a timer', async () => {
    server.kill();
    const boot = async (): Promise<TestingModule> => {
      const module = await Test.createTestingModule({
        imports: [
          SundialModule.forRoot({ connection: server.url, prefix: 'boot' }),
          SundialWorkerModule.forRoot({ prefix: 'boot', dispatch: true }),
        ],
        providers: [Notes],
      }).compile();
      apps.push(module);
      return module.init();
    };
    const [booted] = await Promise.all([boot(), server.restart(OUTAGE_MS)]);
    await booted.get(Timers).schedule({ key: 'after', handler: 'note', payload: 'ran', delay: 0 });
    const notes = booted.get(Notes);
    await waitFor(() => notes.seen.length > 0, { what: 'the @OnTimer run' });
    expect(notes.seen).toEqual(['ran']);
  }, 30_000);

  it('says the outage at boot once, in the wait line: no error from its BullMQ connections', async () => {
    // Before: a line per reconnect attempt from each (35 from the dispatcher's queue in a 30 s wait); then
    // one error each from the dispatcher's queue, the fire queue and the fire worker before the wait's one
    // warn, for the same expected wait. Their errors during the start are counted, not logged
    // (ErrorThrottle.holdUntil; a failure outlasting the start is logged: error-throttle.spec.ts).
    const lines: string[] = [];
    const record = (message: unknown) => void lines.push(String(message));
    const nestLogger = { log: record, error: record, warn: record, debug: record, verbose: record };
    const logger = { info: record, error: record, warn: record, debug: () => undefined };
    server.kill();
    const module = await Test.createTestingModule({
      imports: [
        SundialModule.forRoot({ connection: server.url, prefix: 'quiet', logger }),
        SundialWorkerModule.forRoot({ prefix: 'quiet', dispatch: true }),
      ],
    })
      .setLogger(nestLogger)
      .compile();
    apps.push(module);
    await Promise.all([module.init(), server.restart(OUTAGE_MS)]);
    for (const source of [
      'fire queue of partition 0',
      'Sundial dispatcher queue',
      'fire worker of partition 0',
    ]) {
      expect(lines.filter((line) => line.startsWith(`${source}: `))).toEqual([]);
    }
    // The start wait names what is wrong, not ioredis's 'Reached the max retries…' wrapping it.
    const waits = lines.filter((line) => line.startsWith('waiting up to 30000 ms for Redis'));
    expect(waits).not.toEqual([]);
    for (const line of waits) expect(line).toMatch(/starting: (connect ECONNREFUSED |no answer yet$)/);
  }, 30_000);

  /** SundialModule (forRoot or forRootAsync) with startWaitMs, alone or with a dispatching worker. */
  const withStartWait = (startWaitMs: number, how: 'forRoot' | 'forRootAsync', worker: boolean) => {
    const options = { connection: server.url, prefix: 'bounded', startWaitMs };
    const sundial =
      how === 'forRoot'
        ? SundialModule.forRoot(options)
        : SundialModule.forRootAsync({ useFactory: () => options });
    const workers = worker ? [SundialWorkerModule.forRoot({ prefix: 'bounded', dispatch: true })] : [];
    return Test.createTestingModule({ imports: [sundial, ...workers], providers: [Notes] }).compile();
  };

  it.each([
    ['forRoot', false],
    ['forRootAsync', false],
    ['forRoot', true],
  ] as const)(
    'with startWaitMs (%s, worker %s) fails past it, saying why, not after 30 s',
    async (how, worker) => {
      server.kill();
      const module = await withStartWait(1_500, how, worker);
      const started = Date.now();
      try {
        await expect(module.init()).rejects.toThrow(/^Redis did not answer within 1500 ms at start: /);
        expect(Date.now() - started).toBeGreaterThanOrEqual(1_500);
        expect(Date.now() - started).toBeLessThan(6_000);
      } finally {
        await module.close();
        await server.restart(0);
      }
    },
    40_000,
  );

  it('with startWaitMs boots when Redis is back within it', async () => {
    server.kill();
    const module = await withStartWait(8_000, 'forRootAsync', true);
    apps.push(module);
    const [booted] = await Promise.all([module.init(), server.restart(1_000)]);
    await booted.get(Timers).schedule({ key: 'bounded', handler: 'note', payload: 'ok', delay: 0 });
    await waitFor(() => booted.get(Notes).seen.length > 0, { what: 'the @OnTimer run' });
    expect(booted.get(Notes).seen).toEqual(['ok']);
  }, 30_000);
});

import type { SundialError } from '@sundial/core';
import { Dispatcher, type FireJobConsumer, RedisTimers, TimerRunner } from '@sundial/redis';
import { CommandGate, type RedisServer, startRedis } from '@sundial/testing/harness';
import { closedWhileStarting } from './close-during-fixture';
import { recordingLogger } from './library-host-fixture';

/** How a start settled: `started`, or its error's reason (none: '') and message. */
const settled = (start: Promise<void>) =>
  start.then(
    () => ({ reason: 'started', message: '' }),
    (error: SundialError) => ({ reason: error.reason ?? '', message: error.message }),
  );

/**
 * A close (`close()`, `dispose()`) that overtakes a start after it waited for Redis: in its store checks,
 * or as its consumers start (infra/start-unless-closed.ts). close-while-starting.test.ts has the starts
 * still waiting for Redis or their subscription.
 */
describe('close() overtaking a start past its wait for Redis', () => {
  let redis: RedisServer;
  let n = 0;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(() => redis?.stop());

  it('in its store checks (its first FUNCTION LOAD held): rejects Closed while starting, not what the shut connection said', async () => {
    const starts = [
      (connection: string) => {
        const dispatcher = new Dispatcher({ connection, prefix: `cms${n++}`, logger: recordingLogger() });
        return { start: dispatcher.start(), close: () => dispatcher.close() };
      },
      (connection: string) => {
        const runner = new TimerRunner({
          connection,
          prefix: `cms${n++}`,
          handlers: {},
          logger: recordingLogger(),
        });
        return { start: runner.start(), close: () => runner.close(0) };
      },
      (connection: string) => {
        const timers = new RedisTimers({ connection, prefix: `cms${n++}`, logger: recordingLogger() });
        return { start: timers.connect(), close: () => timers.dispose() };
      },
    ];
    const outcomes = await Promise.all(
      starts.map(async (make) => {
        const gate = await CommandGate.start({ port: redis.port }, /FUNCTION/i);
        try {
          const { start, close } = make(gate.url);
          const outcome = settled(start);
          await gate.held;
          const closed = close();
          gate.release();
          await closed;
          return await outcome;
        } finally {
          await gate.stop();
        }
      }),
    );
    // Before: the dispatcher's and the runner's rejected `Connection is closed.`, the client's `unavailable`
    // "Redis is unreachable (Connection is closed.); the call changed nothing", Redis fine all along.
    const { error } = closedWhileStarting;
    expect(outcomes).toEqual([error, error, error]);
  });

  it('as its consumers start: rejects Closed while starting, starts no watchdog, says it consumes nothing', async () => {
    const consuming: boolean[] = [];
    const runner = new TimerRunner({
      connection: redis.url,
      prefix: `cms${n++}`,
      handlers: {},
      consumers: 'external',
      logger: recordingLogger(),
      observer: { consuming: ({ on }) => void consuming.push(on) },
    });
    let ready: () => void = () => undefined;
    const readyAsked = new Promise<void>((asked) => {
      const consumer: FireJobConsumer = {
        name: runner.keys.queueName(0),
        run: () => new Promise(() => undefined), // a BullMQ Worker's run() ends when it closes
        waitUntilReady: () => {
          asked();
          return new Promise<void>((resolve) => (ready = resolve));
        },
        close: async () => undefined,
        disconnect: async () => undefined,
      };
      runner.attachConsumer(consumer);
    });
    const outcome = settled(runner.start());
    await readyAsked;
    await runner.close(0);
    ready();
    // Before: it resolved as started, told its observer it consumes (the gauge stayed 1 after the close's
    // count), and its consumer watchdog's 10 s interval, started after the close, kept the process up.
    expect(await outcome).toEqual(closedWhileStarting.error);
    expect(consuming).toEqual([]);
  });
});

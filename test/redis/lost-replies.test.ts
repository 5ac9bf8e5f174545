import { silentLogger, type TimerEvent, type TimerSpec } from '@sundial/core';
import {
  defineCommands,
  Dispatcher,
  Reconciler,
  RedisTimers,
  TimerRunner,
  type TimerRunnerOptions,
  type ScriptName,
  scriptOfCall,
} from '@sundial/redis';
import Redis from 'ioredis';
import { type RedisServer, ReplyDropper, startRedis, waitFor } from '@sundial/testing/harness';
import { gate, matching, recorder } from './fire-fixture';

const quiet = silentLogger;

/** A call of one Lua command: EVALSHA, EVAL (what ioredis sends first on each connection) or FCALL. */
function evalOf(script: ScriptName) {
  return (sent: string[]) => scriptOfCall(sent) === script;
}

/**
 * docs/design.md "Repeated calls": a reply lost after Redis ran a script makes ioredis send the same
 * EVALSHA again after it reconnects. Each state-changing script, behind a proxy that drops exactly that
 * one reply, must answer and record what really happened.
 */
describe('a lost reply: every state-changing script answers what happened', () => {
  let server: RedisServer;
  let proxy: ReplyDropper;
  let raw: Redis;
  let prefixes = 0;
  const closers: (() => Promise<unknown>)[] = [];

  beforeAll(async () => {
    server = await startRedis();
    proxy = await ReplyDropper.start({ port: server.port });
    raw = new Redis(server.url);
    defineCommands(raw);
  });
  beforeEach(() => proxy.reset());
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });
  afterAll(async () => {
    await raw?.quit();
    await proxy?.stop();
    await server?.stop();
  });

  /** A client through the proxy, and every event of its prefix. */
  async function setup() {
    const prefix = `l${++prefixes}`;
    const timers = new RedisTimers({ connection: proxy.url, prefix, logger: quiet });
    closers.push(() => timers.dispose());
    const events: TimerEvent[] = [];
    const subscriber = raw.duplicate();
    closers.push(() => subscriber.quit());
    subscriber.on('message', (_channel: string, message: string) =>
      events.push(JSON.parse(message) as TimerEvent),
    );
    await subscriber.subscribe(`${prefix}:events`);
    await timers.connect();
    return { prefix, timers, events };
  }

  async function dropOnce<T>(script: ScriptName, call: () => Promise<T>, nth = 1): Promise<T> {
    proxy.dropReplyTo({ matches: evalOf(script), nth });
    const before = proxy.dropped;
    const result = await call();
    expect(proxy.dropped).toBe(before + 1);
    return result;
  }

  it('schedule: the timer it created, not duplicate-key', async () => {
    const { timers } = await setup();
    const timer = await dropOnce('schedule', () => timers.schedule({ key: 's', handler: 'h', delay: '1h' }));
    expect(await timers.get('s')).toMatchObject({ id: timer.id, version: 1, dueAt: timer.dueAt });
    expect(await timers.snapshot()).toEqual([timer.id]);
  });

  it('scheduleMany over several calls: every timer it created', async () => {
    const { timers } = await setup();
    const specs = Array.from({ length: 150 }, (_, n) => ({
      key: `m:${n}`,
      handler: 'h',
      delay: '1h' as const,
    }));
    // call 1 checks the keys (a read); call 2 writes the first 100
    const created = await dropOnce('schedule', () => timers.scheduleMany(specs), 2);
    expect((await timers.snapshot()).sort()).toEqual(created.map((timer) => timer.id).sort());
  });

  // '@' lines in the first answers (includes/requests.lua): call 1 plain one-shots only, call 2 with a delay
  it.each([1, 2])(
    'scheduleMany of one-shots at given times, call %i lost: each due as asked',
    async (nth) => {
      const { timers } = await setup();
      const at = Date.now() + 3_600_000;
      const specs: TimerSpec[] = Array.from({ length: 150 }, (_, n) => ({
        key: `p:${n}`,
        handler: 'h',
        payload: { n },
        at: at + n,
      }));
      specs[120] = { key: 'p:120', handler: 'h', delay: '1h' };
      const created = await dropOnce('schedule', () => timers.scheduleMany(specs), nth);
      expect(created.map((timer) => timer.dueAt)).toEqual(
        specs.map((spec, n) => (n === 120 ? created[n].dueAt : at + n)),
      );
      for (const timer of created) expect(await timers.get(timer.key)).toEqual(timer);
    },
  );

  it('cancel: true, once', async () => {
    const { timers, events } = await setup();
    await timers.schedule({ key: 'c', handler: 'h', delay: '1h' });
    expect(await dropOnce('cancel', () => timers.cancel('c'))).toBe(true);
    expect(matching(events, { type: 'cancelled', key: 'c' })).toHaveLength(1);
  });

  it('cancelAll: the true count', async () => {
    const { timers } = await setup();
    await timers.scheduleMany(
      Array.from({ length: 5 }, (_, n) => ({ key: `a:${n}`, handler: 'h', delay: '1h' })),
    );
    expect(await dropOnce('cancel-all', () => timers.cancelAll('a:'))).toBe(5);
  });

  it('reschedule: one move, one version bump', async () => {
    const { timers, events } = await setup();
    await timers.schedule({ key: 'r', handler: 'h', delay: '1h' });
    const moved = await dropOnce('reschedule', () => timers.reschedule('r', { delay: '2h' }));
    expect(moved.version).toBe(2);
    expect(await timers.get('r')).toMatchObject({ version: 2, dueAt: moved.dueAt });
    expect(matching(events, { type: 'scheduled', key: 'r' })).toHaveLength(2);
  });

  it('pause, resume and trigger: each once', async () => {
    const { timers } = await setup();
    await timers.schedule({ key: 'p', handler: 'h', delay: '1h' });
    expect(await dropOnce('pause', () => timers.pause('p'))).toMatchObject({ status: 'paused', version: 2 });
    expect(await dropOnce('resume', () => timers.resume('p'))).toMatchObject({
      status: 'pending',
      version: 3,
    });
    const triggered = await dropOnce('trigger', () => timers.trigger('p'));
    expect(triggered.version).toBe(4);
    expect(await timers.get('p')).toMatchObject({ version: 4 });
  });

  describe('the fire path', () => {
    /** A dispatcher and reconciler on a direct connection; the runner behind the proxy. */
    async function firePath(
      handlers: TimerRunnerOptions['handlers'],
      more: Partial<TimerRunnerOptions> = {},
    ) {
      const setupDone = await setup();
      const shared = { connection: server.url, prefix: setupDone.prefix };
      const dispatcher = new Dispatcher({ ...shared, logger: quiet });
      closers.push(() => dispatcher.close());
      await dispatcher.start();
      const reconciler = new Reconciler({ ...shared, intervalMs: 100, logger: quiet });
      closers.push(() => reconciler.close());
      reconciler.start();
      const runner = new TimerRunner({
        connection: proxy.url,
        prefix: setupDone.prefix,
        handlers,
        logger: quiet,
        ...more,
      });
      closers.push(() => runner.close(0));
      await runner.start();
      return { ...setupDone, runner };
    }

    const settled = (timers: RedisTimers, key: string) =>
      waitFor(
        async () => {
          const timer = await timers.get(key);
          return (timer?.status === 'completed' || timer?.status === 'failed') && timer;
        },
        { timeoutMs: 15_000, what: `${key} to settle` },
      );

    it.each(['at-least-once', 'at-most-once'] as const)(
      'claim (%s): the handler runs once, at once, and completes',
      async (delivery) => {
        const job = recorder();
        const { timers } = await firePath({ job: job.handler }, { leaseMs: 3000 });
        proxy.dropReplyTo({ matches: evalOf('claim') });
        await timers.schedule({ key: 'c', handler: 'job', delay: 50, delivery, removeOnComplete: false });
        expect(await settled(timers, 'c')).toMatchObject({ status: 'completed', runCount: 1 });
        expect(proxy.dropped).toBe(1);
        expect(job.calls).toHaveLength(1);
      },
    );

    it('claim of an awaitTask:false tick: the tick runs and its outcome is recorded', async () => {
      const job = recorder();
      const { timers } = await firePath({ job: job.handler });
      proxy.dropReplyTo({ matches: evalOf('claim') });
      await timers.schedule({
        key: 'f',
        handler: 'job',
        every: 200,
        awaitTask: false,
        maxRuns: 2,
        removeOnComplete: false,
      });
      expect(await settled(timers, 'f')).toMatchObject({ status: 'completed', runCount: 2 });
      expect(proxy.dropped).toBe(1);
      expect(job.calls.map((ctx) => ctx.runCount)).toEqual([1, 2]);
    });

    it('complete: done once, no stale event', async () => {
      const job = recorder();
      const { timers, events } = await firePath({ job: job.handler });
      proxy.dropReplyTo({ matches: evalOf('complete') });
      await timers.schedule({ key: 'd', handler: 'job', every: 100, maxRuns: 2, removeOnComplete: false });
      expect(await settled(timers, 'd')).toMatchObject({ status: 'completed', runCount: 2 });
      expect(proxy.dropped).toBe(1);
      expect(job.calls).toHaveLength(2);
      expect(matching(events, { type: 'stale' })).toEqual([]);
    });

    it('renew-leases: the run keeps its lease and completes once', async () => {
      const release = gate();
      const job = recorder(() => release.promise);
      const { timers, prefix } = await firePath({ job: job.handler }, { leaseMs: 600 });
      await timers.schedule({ key: 'n', handler: 'job', delay: 0, removeOnComplete: false });
      await waitFor(() => job.calls.length === 1);
      await dropOnce('renew-leases', () => waitFor(() => proxy.dropped === 1, { what: 'a renewal' }));
      // Renewals go on after the lost reply: the lease reaches two lease lengths past the drop.
      const row = `${prefix}:{p0}:t:n`;
      const target = Number(await raw.hget(row, 'lu')) + 1200;
      await waitFor(async () => Number(await raw.hget(row, 'lu')) >= target, {
        what: 'renewals after the drop',
      });
      release.open();
      expect(await settled(timers, 'n')).toMatchObject({ status: 'completed', runCount: 1 });
      expect(job.calls).toHaveLength(1);
    });

    it('release: a handed-back at-least-once run runs again elsewhere, once', async () => {
      const first = recorder(() => new Promise(() => undefined)); // never ends: handed back at close
      const { timers, runner, prefix } = await firePath({ job: first.handler }, { leaseMs: 5000 });
      await timers.schedule({ key: 'x', handler: 'job', delay: 0, removeOnComplete: false });
      await waitFor(() => first.calls.length === 1);
      await dropOnce('release', () => runner.close(0));
      const second = recorder();
      const other = new TimerRunner({
        connection: server.url,
        prefix,
        handlers: { job: second.handler },
        logger: quiet,
      });
      closers.push(() => other.close(0));
      await other.start();
      expect(await settled(timers, 'x')).toMatchObject({ status: 'completed', runCount: 2 });
      expect(second.calls).toHaveLength(1);
    });
  });
});

import { silentLogger } from '@sundial/core';
import { type RedisServer, startRedis } from '@sundial/testing/harness';
import { Redis } from 'ioredis';
import { RedisTimers } from '../client/redis-timers';
import { FireCommands, type TimerRef } from '../store/fire-commands';
import { defineCommands } from '../store/script-loader';
import { RidingClaims } from './claim-rides';
import { CompletionBatcher } from './completion-batcher';

/** Reads Redis made of its clients' sockets so far (INFO stats; the INFO call's own read included). */
async function readsOf(redis: Redis): Promise<number> {
  const info = await redis.info('stats');
  return Number(/total_reads_processed:(\d+)/.exec(info)?.[1]);
}

describe('RidingClaims (a claim call and the completions past their linger in one socket write)', () => {
  let server: RedisServer;
  let connections: Redis[];
  let timers: RedisTimers;
  beforeAll(async () => {
    server = await startRedis();
  });
  beforeEach(() => {
    connections = [];
    timers = new RedisTimers({ connection: server.url, prefix: 'rides', logger: silentLogger });
  });
  afterEach(async () => {
    jest.useRealTimers();
    await timers.dispose();
    await Promise.all(connections.map((connection) => connection.quit()));
  });
  afterAll(() => server.stop());

  const connect = async (): Promise<Redis> => {
    const redis = new Redis(server.url);
    defineCommands(redis);
    connections.push(redis);
    await redis.ping();
    return redis;
  };

  const due = async (key: string): Promise<TimerRef> => {
    const { id, version, dueAt } = await timers.schedule({ key, handler: 'h', delay: 0 });
    return { id, key, version, due: dueAt };
  };

  async function rideOnce(rides: boolean) {
    const [commandRedis, claimRedis, observer] = await Promise.all([connect(), connect(), connect()]);
    const commands = new FireCommands(commandRedis, timers.keys);
    const claims = new FireCommands(claimRedis, timers.keys);
    const [first, second] = await Promise.all([due(`a-${rides}`), due(`b-${rides}`)]);
    const [held] = await claims.claim(0, 30_000, 'w', [first]);
    if (held.kind !== 'claimed') throw new Error(`not claimed: ${held.kind}`);
    // Each connection's first call of a script sends its whole text (EVAL, several reads): not measured.
    await Promise.all([commands.complete(0, []), claims.complete(0, [])]);
    const batcher = new CompletionBatcher(commands, { memoryMs: 60_000, keepTrying: () => false, rides });
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    const completed = batcher.complete(0, {
      ...first,
      runCount: 1,
      mode: 'held',
      outcome: 'ok',
      missed: 0,
      overlap: 0,
    });
    const before = await readsOf(observer);
    jest.advanceTimersByTime(5); // its linger is over: without rides it goes now, alone
    const [claimed] = await new RidingClaims(claimRedis, claims, batcher).claim(0, 30_000, 'w', [second]);
    const result = await completed;
    const reads = (await readsOf(observer)) - before - 1;
    return { claimed: claimed.kind, completed: result, reads };
  }

  it.each([
    { rides: true, reads: 1, how: 'rides: the claim and the completion reach Redis in one read' },
    { rides: false, reads: 2, how: 'no rides: the completion went alone at its linger, two reads' },
  ])('$how, and both are done', async ({ rides, reads }) => {
    expect(await rideOnce(rides)).toEqual({
      claimed: 'claimed',
      completed: { kind: 'done', missed: 0, overlap: 0 },
      reads,
    });
  });
});

import { closeRedis, openRedis, type RedisClient } from '@sundial/redis';
import { type RedisServer, startRedis } from '@sundial/testing';
import { Pipeline, type Redis, ReplyError } from 'ioredis';
import { median, survivedPerScavenge } from './scavenge-survivors';

let server: RedisServer;
let redis: Redis;

beforeAll(async () => {
  server = await startRedis();
  // openRedis installs the replacements (once per process) before it makes the connection.
  redis = openRedis(server.url) as Redis;
});
afterAll(async () => {
  await closeRedis(redis as RedisClient);
  await server.stop();
});

/**
 * docs/design.md "ioredis closures": each ioredis 6.0.0 pipeline got a hidden class of its own (its
 * `length` getter), and each `multi()` two pretenured function literals; either kept the pipeline's
 * commands and replies alive through scavenges. Measured in a child (scavenge-survivors.ts).
 */
describe('bytes surviving scavenges in a loop of multi()', () => {
  it('stay a few KB with the replacements; without them over 256 KB (the control: the cost is there)', async () => {
    const loop = { call: "redis.multi().set('k', json).get('k').exec()", times: 15_000 };
    const without = await survivedPerScavenge(server.url, { patched: false, ...loop });
    const withFix = await survivedPerScavenge(server.url, { patched: true, ...loop });
    expect(median(without)).toBeGreaterThan(256 * 1024);
    expect(median(withFix)).toBeLessThan(64 * 1024);
  }, 120_000);
});

describe('pipelines with the replacements', () => {
  it('count their commands on the prototype, and answer each command in order', async () => {
    const pipeline = redis.pipeline().set('p', '1').get('p').set('text', 'x').incr('text');
    expect(pipeline).toBeInstanceOf(Pipeline);
    expect(Object.getOwnPropertyDescriptor(pipeline, 'length')).toBeUndefined();
    expect(pipeline.length).toBe(4);
    const results = await pipeline.exec();
    expect(results?.slice(0, 3)).toEqual([
      [null, 'OK'],
      [null, '1'],
      [null, 'OK'],
    ]);
    expect(results?.[3][0]).toBeInstanceOf(ReplyError);
  });

  it('carry the defined scripts and the commands given as a batch', async () => {
    redis.defineCommand('twice', { numberOfKeys: 0, lua: 'return ARGV[1] .. ARGV[1]' });
    const pipeline = redis.pipeline([
      ['set', 'b', 'v'],
      ['get', 'b'],
    ]) as unknown as Record<'twice', (arg: string) => Pipeline> & Pipeline;
    expect(await pipeline.twice('ab').exec()).toEqual([
      [null, 'OK'],
      [null, 'v'],
      [null, 'abab'],
    ]);
  });
});

describe('multi() with the replacements', () => {
  it('answers the transaction, by promise and by callback, with reply transformers applied', async () => {
    expect(await redis.multi().hset('mh', { a: '1' }).hgetall('mh').exec()).toEqual([
      [null, 1],
      [null, { a: '1' }],
    ]);
    const viaCallback = await new Promise((resolve, reject) =>
      redis
        .multi([
          ['set', 'mc', '2'],
          ['get', 'mc'],
        ])
        .exec((err, result) => (err ? reject(err) : resolve(result))),
    );
    expect(viaCallback).toEqual([
      [null, 'OK'],
      [null, '2'],
    ]);
  });

  it('rejects a discarded transaction with EXECABORT and the errors before it', async () => {
    const discarded = redis.multi().set('ok', '1').call('set', 'missing-value');
    const error = (await discarded.exec().catch((err: unknown) => err)) as Error & {
      previousErrors: Error[];
    };
    expect(error).toBeInstanceOf(ReplyError);
    expect(error.message).toMatch(/^EXECABORT/);
    expect(error.previousErrors.map((e) => e.message)).toEqual([
      expect.stringMatching(/wrong number of arguments/),
    ]);
    expect(await redis.exists('ok')).toBe(0);
  });

  it('with { pipeline: false } sends MULTI alone, as ioredis does', async () => {
    expect(await redis.multi({ pipeline: false })).toBe('OK');
    expect(await redis.set('np', '3')).toBe('QUEUED');
    expect(await redis.exec()).toEqual([[null, 'OK']]);
    expect(await redis.get('np')).toBe('3');
  });
});

import { closeRedis, openRedis, type RedisClient } from '@sundial/redis';
import { type RedisServer, startRedis } from '@sundial/testing/harness';
import { Command, Pipeline, type Redis, ReplyError } from 'ioredis';
import { CLOSURES, median, survivedPerScavenge } from './scavenge-survivors';

let server: RedisServer;
let redis: Redis;

beforeAll(async () => {
  server = await startRedis();
  // openRedis installs the replacements (once per process) before it makes the connection.
  redis = openRedis(server.url, { showFriendlyErrorStack: true }) as Redis;
});
afterAll(async () => {
  await closeRedis(redis as RedisClient);
  await server.stop();
});

/**
 * docs/design.md "ioredis closures": ioredis 6.0.0 sets each command's `reject` to a function literal,
 * which V8 allocates in the old generation, gives each pipeline a hidden class of its own (its
 * `length` getter) and each `multi()` two more pretenured literals: everything a command or pipeline
 * references then survives the next scavenges. Measured in a child, with and without the
 * replacements (scavenge-survivors.ts).
 */
describe('bytes surviving scavenges', () => {
  it.each([
    ['commands', { call: 'redis.echo(json)', times: 40_000 }],
    ['multi()', { call: "redis.multi().set('k', json).get('k').exec()", times: 15_000 }],
  ])(
    'in a loop of %s stay a few KB with the replacements; without them over 256 KB (the control)',
    async (_what, loop) => {
      const without = await survivedPerScavenge(server.url, { patched: false, ...loop });
      const withFix = await survivedPerScavenge(server.url, { patched: true, ...loop });
      expect(median(without)).toBeGreaterThan(256 * 1024);
      expect(median(withFix)).toBeLessThan(64 * 1024);
    },
    120_000,
  );
});

describe('the replacements', () => {
  it('are in place once a connection is opened: no command or script command sets a literal reject', () => {
    const literal = /this\.reject = \(err\) =>/;
    expect(String(Command.prototype['initPromise' as keyof Command])).not.toMatch(literal);
    redis.defineCommand('probeScript', { numberOfKeys: 0, lua: 'return 1' });
    const scripts = (redis as unknown as { scriptsSet: Record<string, { Command: typeof Command }> })
      .scriptsSet;
    expect(String(scripts.probeScript.Command.prototype.toWritable)).not.toMatch(literal);
  });

  it("leave another ioredis as it is, and say so once in an info line through the start's logger", () => {
    jest.isolateModules(() => {
      jest.doMock('ioredis/package.json', () => ({ version: '6.0.1' }));
      const printed = ['log', 'warn', 'error'].map((method) =>
        jest.spyOn(globalThis.console, method as 'log').mockImplementation(() => undefined),
      );
      /* eslint-disable @typescript-eslint/no-require-imports */
      const fresh = require('ioredis/built/Command') as { default: typeof Command };
      const { installIoredisClosures, reportIoredisPatch } = require(
        CLOSURES,
      ) as typeof import('../../libs/redis/src/infra/ioredis-closures');
      /* eslint-enable @typescript-eslint/no-require-imports */
      const before = fresh.default.prototype['initPromise' as keyof Command];
      installIoredisClosures();
      expect(fresh.default.prototype['initPromise' as keyof Command]).toBe(before);
      // Where a connection opens no logger is at hand: a Nest app's console got a JSON line of its own.
      for (const spy of printed) expect(spy).not.toHaveBeenCalled();
      const lines: [string, string][] = [];
      const logger = {
        info: (message: string) => lines.push(['info', message]),
        warn: (message: string) => lines.push(['warn', message]),
      };
      reportIoredisPatch(logger);
      reportIoredisPatch(logger);
      expect(lines).toEqual([
        ['info', expect.stringMatching(/^ioredis 6\.0\.1 runs as it is;.*npm install ioredis@6\.0\.0/)],
      ]);
      for (const spy of printed) spy.mockRestore();
    });
  });
});

describe('commands with the replacements', () => {
  it('resolve, with ioredis argument and reply transformers and Buffer replies', async () => {
    await redis.hset('h', { a: '1', b: '2' });
    expect(await redis.hgetall('h')).toEqual({ a: '1', b: '2' });
    expect(await redis.getBuffer('missing')).toBeNull();
    await redis.set('buf', 'xyz');
    expect(await redis.getBuffer('buf')).toEqual(Buffer.from('xyz'));
    const viaCallback = await new Promise((resolve, reject) =>
      redis.get('buf', (err, value) => (err ? reject(err) : resolve(value))),
    );
    expect(viaCallback).toBe('xyz');
  });

  it('reject with a ReplyError whose stack starts at the caller (showFriendlyErrorStack)', async () => {
    await redis.set('text', 'not a number');
    const error = await redis.incr('text').catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ReplyError);
    expect((error as Error).message).toMatch(/not an integer/);
    const frames = (error as Error).stack?.split('\n').slice(1) ?? [];
    expect(frames[0]).toContain('ioredis-closures.test.ts');
    const failed = await new Promise<unknown>((resolve) => redis.incr('text', (err) => resolve(err)));
    expect(failed).toBeInstanceOf(ReplyError);
  });

  it('reject when their own timeout ends them (commandTimeout)', async () => {
    const timed = openRedis(server.url, { commandTimeout: 50 }) as Redis;
    try {
      await expect(timed.blpop('nothing-here', 5)).rejects.toThrow('Command timed out');
    } finally {
      timed.disconnect();
    }
  });

  it('keep resolve and reject callable detached (ioredis Cluster calls the original reject so)', async () => {
    const command = new Command('get', ['k']);
    const { reject } = command;
    reject(new Error('detached'));
    await expect(command.promise).rejects.toThrow('detached');
    const other = new Command('get', ['k'], { replyEncoding: 'utf8' });
    const { resolve } = other;
    resolve(Buffer.from('v'));
    await expect(other.promise).resolves.toBe('v');
  });
});

describe('scripts with the replacements', () => {
  it('are sent as EVAL once, then EVALSHA; after SCRIPT FLUSH the NOSCRIPT reply is answered by an EVAL', async () => {
    const lua = "if ARGV[1] == 'fail' then return redis.error_reply('ERR asked to fail') end return ARGV[1]";
    redis.defineCommand('echoArg', { numberOfKeys: 0, lua });
    const echoArg = (arg: string): Promise<string> =>
      (redis as unknown as Record<'echoArg', (arg: string) => Promise<string>>).echoArg(arg);
    await redis.config('RESETSTAT');
    expect(await echoArg('one')).toBe('one');
    expect(await echoArg('two')).toBe('two');
    expect(await evalCalls()).toEqual({ eval: 1, evalsha: 1 });
    await redis.script('FLUSH');
    expect(await echoArg('three')).toBe('three');
    // The EVALSHA refused with NOSCRIPT, then the same call as EVAL.
    expect(await evalCalls()).toEqual({ eval: 2, evalsha: 2 });
    expect(await echoArg('four')).toBe('four');
    expect(await evalCalls()).toEqual({ eval: 2, evalsha: 3 });
    await expect(echoArg('fail')).rejects.toThrow(new ReplyError('ERR asked to fail'));
  });
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

/** Calls of EVAL and EVALSHA since the last CONFIG RESETSTAT, by INFO commandstats. */
async function evalCalls(): Promise<{ eval: number; evalsha: number }> {
  const info = await redis.info('commandstats');
  const calls = (name: string) => Number(new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(info)?.[1] ?? 0);
  return { eval: calls('eval'), evalsha: calls('evalsha') };
}

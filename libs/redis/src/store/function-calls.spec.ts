import type { RedisClient } from '../infra/connection';
import { Redis, ReplyError } from 'ioredis';
import { callFunction, loadLibraries } from './function-calls';

const library = { name: 'sundial_x_0123456789abcdef', code: '#!lua name=sundial_x_0123456789abcdef\n' };

/** A connection that answers from `replies` (no socket: `lazyConnect`, every used command replaced). */
function node(replies: {
  info?: () => Promise<string>;
  call?: (...args: unknown[]) => Promise<unknown>;
  fcall?: (...args: unknown[]) => Promise<unknown>;
}): RedisClient & { sent: unknown[][] } {
  const redis = new Redis({ lazyConnect: true, host: 'redis.test', port: 6380 });
  const sent: unknown[][] = [];
  const record =
    (name: string, answer?: (...args: unknown[]) => Promise<unknown>) =>
    (...args: unknown[]) => {
      sent.push([name, ...args]);
      return answer ? answer(...args) : Promise.resolve('OK');
    };
  Object.assign(redis, {
    sent,
    info: record('info', replies.info ?? (() => Promise.resolve('redis_version:7.0.15\r\n'))),
    call: record('call', replies.call),
    fcall: record('fcall', replies.fcall),
  });
  return redis as RedisClient & { sent: unknown[][] };
}

describe('Redis Functions: loading and calling', () => {
  it('refuses a Redis before 7.0 with a reason, the node and a fix, and loads nothing there', async () => {
    const old = node({ info: () => Promise.resolve('# Server\r\nredis_version:6.2.14\r\n') });
    await expect(loadLibraries(old, [library])).rejects.toMatchObject({
      reason: 'invalid',
      field: 'connection',
      message: expect.stringMatching(/redis\.test:6380 is version 6\.2\.14.*7\.0 or later/),
      fix: expect.stringMatching(/Upgrade Redis/),
    });
    expect(old.sent.map(([name]) => name)).toEqual(['info']);
  });

  it('refuses a Redis without FUNCTION when INFO is not allowed', async () => {
    const old = node({
      info: () =>
        Promise.reject(new ReplyError("NOPERM this user has no permissions to run the 'info' command")),
      call: () =>
        Promise.reject(new ReplyError("ERR unknown command 'FUNCTION', with args beginning with: ")),
    });
    await expect(loadLibraries(old, [library])).rejects.toMatchObject({
      reason: 'invalid',
      field: 'connection',
    });
  });

  it('refuses an ACL user that may not load functions, with the rights to grant', async () => {
    const denied = node({
      call: () =>
        Promise.reject(
          new ReplyError("NOPERM this user has no permissions to run the 'function|load' command"),
        ),
    });
    await expect(loadLibraries(denied, [library])).rejects.toMatchObject({
      reason: 'invalid',
      field: 'connection',
      message: expect.stringMatching(/redis\.test:6380 refused .*NOPERM/),
      fix: expect.stringMatching(/\+fcall \+function\|load/),
    });
  });

  it('loads each library once per call, a library already there counting as loaded', async () => {
    const redis = node({ call: () => Promise.reject(new ReplyError("ERR Library 'x' already exists")) });
    await loadLibraries(redis, [library]);
    expect(redis.sent).toEqual([
      ['info', 'server'],
      ['call', 'FUNCTION', 'LOAD', library.code],
    ]);
  });

  it('a function not found is loaded and called once more; another error is the call’s', async () => {
    let calls = 0;
    const redis = node({
      fcall: () =>
        ++calls === 1 ? Promise.reject(new ReplyError('ERR Function not found')) : Promise.resolve(7),
    });
    await expect(callFunction(redis, library, 'P:{p0}:', 'a', ['b', 1])).resolves.toBe(7);
    expect(redis.sent).toEqual([
      ['fcall', library.name, 1, 'P:{p0}:', 'a', ['b', 1]],
      ['call', 'FUNCTION', 'LOAD', library.code],
      ['fcall', library.name, 1, 'P:{p0}:', 'a', ['b', 1]],
    ]);

    const failing = node({ fcall: () => Promise.reject(new ReplyError('ERR Function not found')) });
    await expect(callFunction(failing, library, 'P:{p0}:')).rejects.toThrow(/Function not found/);
    expect(failing.sent.map(([name]) => name)).toEqual(['fcall', 'call', 'fcall']);

    const busy = node({ fcall: () => Promise.reject(new ReplyError('BUSY Redis is busy running a script')) });
    await expect(callFunction(busy, library, 'P:{p0}:')).rejects.toThrow(/BUSY/);
    expect(busy.sent.map(([name]) => name)).toEqual(['fcall']);
  });
});

import { once } from 'node:events';
import { createServer } from 'node:net';
import { isSundialError } from '@sundial/core';
import { Redis } from 'ioredis';
import { closeRedis, openRedis } from './connection';
import { parseRedisUrl } from './redis-url';

describe('parseRedisUrl', () => {
  it('passes a one-node URL to ioredis as it is', () => {
    expect(parseRedisUrl('redis://user:pw@127.0.0.1:6380/2')).toEqual({
      kind: 'node',
      url: 'redis://user:pw@127.0.0.1:6380/2',
    });
    expect(parseRedisUrl('rediss://cache.example')).toEqual({ kind: 'node', url: 'rediss://cache.example' });
  });

  it('reads a cluster seed list, its credentials and TLS', () => {
    expect(parseRedisUrl('redis+cluster://127.0.0.1:7000,127.0.0.1:7001,[::1]:7002,node-4')).toEqual({
      kind: 'cluster',
      nodes: [
        { host: '127.0.0.1', port: 7000 },
        { host: '127.0.0.1', port: 7001 },
        { host: '::1', port: 7002 },
        { host: 'node-4', port: 6379 },
      ],
      options: {},
    });
    expect(parseRedisUrl('rediss+cluster://app:p%40ss@h1:7000/')).toEqual({
      kind: 'cluster',
      nodes: [{ host: 'h1', port: 7000 }],
      options: { username: 'app', password: 'p@ss', tls: {} },
    });
  });

  it('reads Sentinels, the master name and a database', () => {
    expect(parseRedisUrl('redis+sentinel://:secret@s1:26380,s2/mymaster/3')).toEqual({
      kind: 'sentinel',
      sentinels: [
        { host: 's1', port: 26380 },
        { host: 's2', port: 26379 },
      ],
      name: 'mymaster',
      options: { password: 'secret', db: 3 },
    });
  });

  it("reads the Sentinels' own credentials apart from Redis's, and TLS to both", () => {
    expect(
      parseRedisUrl('rediss+sentinel://app:r%40pw@s1/m?sentinelUsername=watch&sentinelPassword=s%2Bpw%26'),
    ).toEqual({
      kind: 'sentinel',
      sentinels: [{ host: 's1', port: 26379 }],
      name: 'm',
      options: {
        username: 'app',
        password: 'r@pw',
        sentinelUsername: 'watch',
        sentinelPassword: 's+pw&',
        // without enableTLSForSentinelMode ioredis reaches the primary in plain TCP
        tls: {},
        enableTLSForSentinelMode: true,
        sentinelTLS: {},
      },
    });
  });

  it('shows no Sentinel password in a refusal', () => {
    const refusal = catchError(() => parseRedisUrl('redis+sentinel://s1/m?sentinelPassword=hush&db=2'));
    expect((refusal as Error).message).toContain('not db');
    expect((refusal as Error).message).not.toContain('hush');
  });

  it.each([
    ['http://127.0.0.1:6379', 'does not start with redis://'],
    ['redis://h1:1,h2:2', 'names one node'],
    ['redis+cluster://h1:7000/1', 'only database 0'],
    ['redis+cluster://h1:99999', '"h1:99999" is not host or host:port'],
    ['redis+cluster://h1:7000,,h2:7001', '"" is not host or host:port'],
    ['redis+sentinel://s1:26379', 'ends with /<master name>'],
    ['redis+sentinel://s1:26379/m/x', 'ends with /<master name>'],
    ['redis+sentinel://s1/m?password=x', 'takes sentinelUsername and sentinelPassword, not password'],
    ['redis+cluster://h1:7000?sentinelPassword=x', 'no path or query'],
  ])('refuses %s, saying why and what to write', (url, why) => {
    const refusal = catchError(() => parseRedisUrl(url));
    expect(isSundialError(refusal)).toBe(true);
    expect(refusal).toMatchObject({ reason: 'invalid', field: 'connection' });
    expect((refusal as Error).message).toContain(why);
    expect((refusal as { fix: string }).fix).toContain('redis+cluster://host1:port1,host2:port2');
  });

  it('keeps the password out of the refusal', () => {
    const refusal = catchError(() => parseRedisUrl('redis+sentinel://user:hunter2@s1'));
    expect((refusal as Error).message).not.toContain('hunter2');
    expect((refusal as Error).message).toContain('redis+sentinel://***@s1');
  });
});

describe('connections through Sentinel', () => {
  const sentinels = [{ host: '127.0.0.1', port: 1 }];

  it.each([
    ['a URL', () => 'redis+sentinel://127.0.0.1:1/m'],
    ['options', () => ({ sentinels, name: 'm' })],
    ['an ioredis client of the host', () => new Redis({ sentinels, name: 'm', lazyConnect: true })],
  ])('from %s follow a failover at the announcement (failoverDetector)', async (_, connection) => {
    const given = connection();
    const redis = openRedis(given, { lazyConnect: true });
    // without it a connection stays on the old primary until Sentinel demotes it, ~10 s later
    expect(redis.options).toMatchObject({ failoverDetector: true });
    await closeRedis(redis);
    if (given instanceof Redis) given.disconnect();
  });
});

/** A local port nothing listens on: a connect there is refused at once. */
async function closedPort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('closing a connection whose socket has closed', () => {
  /** A client waiting to reconnect (a minute between attempts: the close comes while it waits), and a PING it queued. */
  async function reconnecting() {
    const redis = openRedis({
      port: await closedPort(),
      retryStrategy: () => 60_000,
      maxRetriesPerRequest: null,
    });
    const ping = redis.ping();
    await new Promise((resolve) => redis.once('reconnecting', resolve)); // (once() would throw its error)
    return { redis, ping };
  }

  it('closeRedis ends one waiting to reconnect at once: its queue rejected, no timer left behind', async () => {
    const { redis, ping } = await reconnecting();
    const setTimeout = jest.spyOn(globalThis, 'setTimeout');
    try {
      await closeRedis(redis);
      expect(redis.status).toBe('end');
      await expect(ping).rejects.toThrow('Connection is closed.');
      // ioredis's disconnect() alone armed a 2 s `disconnectTimeout` for the socket already closed
      expect(setTimeout).not.toHaveBeenCalled();
    } finally {
      setTimeout.mockRestore();
    }
  });

  it('disconnect() of a client waiting to reconnect ends it, as BullMQ closes its connections (and waits for the end)', async () => {
    const { redis, ping } = await reconnecting();
    const ended = new Promise((resolve) => redis.once('end', resolve));
    redis.disconnect();
    // ioredis 6.0.0 left it `reconnecting` for good: BullMQ's RedisConnection.disconnect() never returned
    await ended;
    expect(redis.status).toBe('end');
    await expect(ping).rejects.toThrow('Connection is closed.');
  });

  it('disconnect() of an ended client arms no timer (as Sentinel does after each primary look-up)', async () => {
    const redis = openRedis({ port: await closedPort(), retryStrategy: () => null, lazyConnect: true });
    const ended = new Promise((resolve) => redis.once('end', resolve));
    redis.connect().catch(() => undefined);
    await ended;
    const setTimeout = jest.spyOn(globalThis, 'setTimeout');
    try {
      redis.disconnect();
      // ioredis 6.0.0 armed its 2 s `disconnectTimeout` for the closed socket (ioredis-disconnect.ts)
      expect(setTimeout).not.toHaveBeenCalled();
    } finally {
      setTimeout.mockRestore();
    }
  });
});

function catchError(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a refusal');
}

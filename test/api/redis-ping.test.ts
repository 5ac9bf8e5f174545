import { type RedisServer, startRedis } from '@sundial/testing';
import { RedisPing } from '../../libs/server/src/redis-ping';

describe("the apps' readiness ping (RedisPing)", () => {
  let redis: RedisServer;
  const pings: RedisPing[] = [];

  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    for (const ping of pings) await ping.close();
    await redis?.stop();
  });

  it('answers a ping sent as it is made, with Redis up: the start logs no wait for Redis', async () => {
    const ping = new RedisPing(redis.url);
    pings.push(ping);
    await expect(ping.ping()).resolves.toBeUndefined();
  });
});

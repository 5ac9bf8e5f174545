import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import Redis from 'ioredis';
import type { RedisServer } from './redis-server';
import { startRedis } from './redis-server';

describe('startRedis', () => {
  let server: RedisServer;
  let client: Redis;

  beforeAll(async () => {
    server = await startRedis();
    client = new Redis(server.url);
  });

  afterAll(async () => {
    await client?.quit();
    await server?.stop();
  });

  it('starts a private server on a free port, never the shared 6379', async () => {
    expect(server.port).not.toBe(6379);
    expect(server.url).toBe(`redis://127.0.0.1:${server.port}`);
    expect(await client.ping()).toBe('PONG');
    expect(await client.config('GET', 'port')).toEqual(['port', String(server.port)]);
  });

  it('serves reads and writes with noeviction and its own dir', async () => {
    await client.set('greeting', 'hello');
    expect(await client.get('greeting')).toBe('hello');
    expect(await client.config('GET', 'maxmemory-policy')).toEqual(['maxmemory-policy', 'noeviction']);
    expect(await client.config('GET', 'dir')).toEqual(['dir', expect.stringContaining('sundial-redis-')]);
  });

  it('stops the server and removes its dir', async () => {
    const other = await startRedis({ args: ['--hz', '10'] });
    const probe = new Redis(other.url);
    expect(await probe.config('GET', 'hz')).toEqual(['hz', '10']);
    await probe.quit();
    await other.stop();
    expect(existsSync(other.dir)).toBe(false);
    await expect(connectRaw(other.port)).rejects.toThrow(/ECONNREFUSED/);
  });
});

function connectRaw(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.end();
      resolve();
    });
    socket.once('error', reject);
  });
}

import Redis from 'ioredis';
import { type RedisServer, startRedis } from '@sundial/testing/harness';

/** The configuration every bench run states: no persistence, no eviction, a 100 Hz server cron. */
const BENCH_REDIS_ARGS = [
  '--hz',
  '100',
  '--maxmemory-policy',
  'noeviction',
  '--save',
  '',
  '--appendonly',
  'no',
];
const REPORTED_SETTINGS = ['hz', 'maxmemory-policy', 'maxmemory', 'save', 'appendonly', 'io-threads'];

export interface RedisDescription {
  version: string;
  settings: Record<string, string>;
}

/** The bench's own private redis-server (never the shared one on 6379) and an admin connection to it. */
export class BenchRedis {
  private constructor(
    private readonly server: RedisServer,
    readonly admin: Redis,
  ) {}

  static async start(): Promise<BenchRedis> {
    const server = await startRedis({ args: BENCH_REDIS_ARGS });
    return new BenchRedis(server, new Redis(server.url, { maxRetriesPerRequest: null }));
  }

  get url(): string {
    return this.server.url;
  }

  async describe(): Promise<RedisDescription> {
    const version = /redis_version:(\S+)/.exec(await this.admin.info('server'))?.[1] ?? 'unknown';
    const settings: Record<string, string> = {};
    for (const name of REPORTED_SETTINGS) {
      const [, value] = (await this.admin.config('GET', name)) as string[];
      settings[name] = value ?? '';
    }
    return { version, settings };
  }

  /** Empties the private Redis between scenarios so one contender never sees the other's keys. */
  async flush(): Promise<void> {
    await this.admin.flushall();
  }

  async usedMemory(): Promise<number> {
    return Number(/used_memory:(\d+)/.exec(await this.admin.info('memory'))?.[1]);
  }

  async resetStats(): Promise<void> {
    await this.admin.config('RESETSTAT');
  }

  /** Calls per command since the last RESETSTAT, including calls made inside Lua scripts. */
  async commandCalls(): Promise<Record<string, number>> {
    const calls: Record<string, number> = {};
    for (const match of (await this.admin.info('commandstats')).matchAll(/cmdstat_([^:]+):calls=(\d+)/g)) {
      calls[match[1]] = Number(match[2]);
    }
    return calls;
  }

  async stop(): Promise<void> {
    this.admin.disconnect();
    await this.server.stop();
  }
}

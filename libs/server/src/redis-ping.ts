import { type ConnectionErrorEvent, type ErrorEvents, openRedis, type RedisClient } from '@sundial/redis';

const PING_TIMEOUT_MS = 1_000;

/**
 * A connection used only to answer readiness (is Redis reachable, and not full): it fails fast instead of queueing commands while
 * Redis is away, so a probe never hangs.
 */
export class RedisPing implements ErrorEvents {
  private readonly client: RedisClient;
  /** Until its first connect ends (ready, or failed), a ping waits for it rather than fail at once. */
  private connecting: Promise<void>;

  /** `url`: any REDIS_URL shape (one node, redis+cluster://, redis+sentinel://). */
  constructor(url: string) {
    this.client = openRedis(url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      lazyConnect: true,
      connectionName: 'sundial-health',
    });
    // Errors surface through ping(); openRedis adds the listener without which ioredis would log them.
    // Without the offline queue a command sent before the socket is up fails ("Stream isn't writeable"):
    // the app's start then logged a wait for Redis and lost a 500 ms retry with Redis up all along.
    this.connecting = this.client.connect().catch(() => undefined);
  }

  /** Resolves when Redis answers and can take writes; rejects saying why not. */
  async ping(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${PING_TIMEOUT_MS} ms`)), PING_TIMEOUT_MS);
    });
    try {
      await Promise.race([
        this.connecting.then(() => this.client.info('memory')).then(assertNotFull),
        timeout,
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Its connection's errors: a refused AUTH (WRONGPASS) shows only there, ping() says the stream is shut. */
  on(event: ConnectionErrorEvent, listener: (error: unknown) => void): void {
    this.client.on(event, listener);
  }

  off(event: ConnectionErrorEvent, listener: (error: unknown) => void): void {
    this.client.off(event, listener);
  }

  async close(): Promise<void> {
    this.client.disconnect();
  }
}

/**
 * A reachable Redis over its maxmemory refuses every write with OOM: not ready, and the probe says
 * why. Memory Redis does not count toward the limit (replication and AOF buffers) is left out, as
 * Redis itself does.
 */
function assertNotFull(info: string): void {
  const field = (name: string) => Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(info)?.[1] ?? 0);
  const maxmemory = field('maxmemory');
  const counted = field('used_memory') - field('mem_not_counted_for_evict');
  if (maxmemory > 0 && counted > maxmemory) {
    throw new Error(
      `Redis is out of memory: ${counted} bytes used of maxmemory ${maxmemory}, so every write is refused (OOM). Free memory or raise maxmemory.`,
    );
  }
}

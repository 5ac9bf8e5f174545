import { Redis } from 'ioredis';

const PING_TIMEOUT_MS = 1_000;

/**
 * A connection used only to answer readiness: it fails fast instead of queueing commands while
 * Redis is away, so a probe never hangs.
 */
export class RedisPing {
  private readonly client: Redis;

  constructor(url: string) {
    this.client = new Redis(url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      lazyConnect: true,
      connectionName: 'sundial-health',
    });
    // Errors surface through ping(); without a listener ioredis would log each reconnect attempt.
    this.client.on('error', () => undefined);
    this.client.connect().catch(() => undefined);
  }

  async ping(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no PONG within ${PING_TIMEOUT_MS} ms`)), PING_TIMEOUT_MS);
    });
    try {
      await Promise.race([this.client.ping(), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    this.client.disconnect();
  }
}

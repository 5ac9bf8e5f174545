import type { RedisClient } from './connection';

/**
 * Redis's clock as seen from this process (docs/spec.md §4.4). Due times are Redis times; local timers are
 * not, so every wait is converted through the measured offset.
 */
export class ClusterClock {
  private offsetMs = 0;
  private resync: NodeJS.Timeout | undefined;

  constructor(private readonly redis: RedisClient) {}

  /** Measures now, then again every `everyMs`: clocks drift. */
  async start(everyMs = 60_000): Promise<void> {
    await this.sync();
    this.resync = setInterval(() => void this.sync().catch(() => undefined), everyMs);
    this.resync.unref();
  }

  stop(): void {
    clearInterval(this.resync);
  }

  /** Measures the offset with a few `TIME` round trips, keeping the tightest (least network noise). */
  async sync(samples = 3): Promise<void> {
    let bestRoundTrip = Infinity;
    for (let i = 0; i < samples; i++) {
      const sent = Date.now();
      const [seconds, micros] = await this.redis.time();
      const received = Date.now();
      if (received - sent > bestRoundTrip) continue;
      bestRoundTrip = received - sent;
      const redisNow = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
      this.offsetMs = redisNow - (sent + received) / 2;
    }
  }

  /** An estimate of Redis now (epoch ms). */
  now(): number {
    return Math.round(Date.now() + this.offsetMs);
  }

  /** Local milliseconds until Redis reaches `at`. */
  msUntil(at: number): number {
    return at - this.now();
  }
}

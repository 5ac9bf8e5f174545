import type { RedisClient } from './connection';

/**
 * Redis's clock as seen from this process (docs/spec.md §4.4). Due times are Redis times; local timers are
 * not, so every wait is converted through the measured offset.
 *
 * The offset is kept against the monotonic clock (`performance.now()`), not the wall clock: a host's wall
 * clock may be stepped while the process runs (NTP correcting a clock that was off, an operator's `date`),
 * and an estimate on `Date.now()` then moved by the whole step until the next measure — a client computed
 * a cron's first occurrence from ten minutes ahead and skipped ten slots, a worker recorded runs ten
 * minutes late. The monotonic clock is never stepped (only slewed, as Redis's host clock is by NTP).
 */
export class ClusterClock {
  /** Redis epoch ms minus `performance.now()`; until the first measure, the local wall clock's */
  private offsetMs = Date.now() - performance.now();
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
      const sent = performance.now();
      const [seconds, micros] = await this.redis.time();
      const received = performance.now();
      if (received - sent > bestRoundTrip) continue;
      bestRoundTrip = received - sent;
      // to the µs: floored to the ms, every estimate stood 0.5 ms behind Redis on average
      const redisNow = Number(seconds) * 1000 + Number(micros) / 1000;
      this.offsetMs = redisNow - (sent + received) / 2;
    }
  }

  /** An estimate of Redis now (epoch ms). */
  now(): number {
    return Math.round(performance.now() + this.offsetMs);
  }

  /** Local milliseconds until Redis reaches `at`. */
  msUntil(at: number): number {
    return at - this.now();
  }
}

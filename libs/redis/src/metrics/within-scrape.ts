// Why a file of its own: sundial-metrics.ts is at its size limit; the bound on a scrape's reads of Redis
// needs nothing of it.

/**
 * How long a scrape waits for each reading of Redis. A frozen Redis (socket open, nothing answers) held
 * the scheduler's /metrics for as long as it stayed frozen: Prometheus timed the scrape out and dropped
 * every series of the process, sundial_redis_up with them, so SundialNoScheduler fired (check the
 * scheduler pods) instead of SundialRedisDown. Past it a gauge's reading is left out, and Redis counts
 * as not answering.
 */
export const SCRAPE_READ_MS = 1_000;

/** `read`, or a rejection once it has taken SCRAPE_READ_MS. */
export function withinScrape<T>(read: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${SCRAPE_READ_MS} ms`)), SCRAPE_READ_MS);
  });
  return Promise.race([read, late]).finally(() => clearTimeout(timer));
}

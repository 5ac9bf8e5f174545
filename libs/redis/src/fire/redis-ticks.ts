import type { ClaimTimes } from './run-timing';
import { untilTick } from './start-tick';

// Why a file of its own: when a run claimed ahead may start is a bound on Redis's clock, which only the
// claims' answers tell; keeping the best recent bound is its own concern, apart from the runner's flow.

/** How long a claim's bound is used for later runs: the clocks of two hosts drift apart. */
const BOUND_KEPT_MS = 50;
/** What they may drift in that time: 500 ppm, the fastest NTP slews a clock (one host's clocks do not). */
const DRIFT_MS = BOUND_KEPT_MS * 500e-6;

interface Bound {
  /** Redis's clock minus `performance.now()` is at least this */
  low: number;
  /** the answer it came from (`performance.now()`) */
  at: number;
}

/**
 * The local monotonic tick at which a partition's Redis clock reaches a due, from claim answers. A claim
 * call reads Redis's TIME somewhere between its send and its answer, so Redis's time minus the answer's
 * tick is a lower bound of Redis's clock minus `performance.now()` (minus the send's tick, an upper one),
 * and a run started at due minus that bound never starts early. An answer read late (the event loop busy
 * with a job or a completion batch) gives a loose bound: the run would start as much late. So the tightest
 * bound of the partition's last 50 ms is kept (per partition: on a Redis Cluster each primary has its own
 * clock), and one an answer contradicts — Redis's clock stepped back — is dropped.
 */
export class RedisTicks {
  private readonly bounds = new Map<number, Bound>();

  /**
   * Resolves when Redis's clock has reached `claimed`'s due; null when it had at the claim (claimed at or
   * after its due: it starts at once).
   */
  untilDue(
    partition: number,
    claimed: { due: number; leftMs: number },
    times: ClaimTimes,
  ): Promise<void> | null {
    return claimed.leftMs > 0 ? untilTick(this.startOf(partition, claimed, times)) : null;
  }

  /** The tick at which `claimed`'s due is reached, learning from the answer it came with. */
  startOf(partition: number, claimed: { due: number; leftMs: number }, times: ClaimTimes): number {
    const redisNow = claimed.due - claimed.leftMs;
    const low = redisNow - times.answeredTick;
    const own = claimed.due - low;
    const kept = this.bounds.get(partition);
    // kept while tighter, recent, and not contradicted by this answer's upper bound
    if (
      kept &&
      kept.low > low &&
      kept.low <= redisNow - times.sentTick &&
      times.answeredTick - kept.at <= BOUND_KEPT_MS
    )
      return Math.min(own, claimed.due - kept.low + DRIFT_MS);
    if (kept) {
      kept.low = low;
      kept.at = times.answeredTick;
    } else this.bounds.set(partition, { low, at: times.answeredTick });
    return own;
  }
}

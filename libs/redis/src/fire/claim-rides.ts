import { Redis } from 'ioredis';
import type { RedisClient } from '../infra/connection';
import type { ClaimResult } from '../store/claim-reply';
import type { FireCommands, TimerRef } from '../store/fire-commands';
import type { CompletionBatcher } from './completion-batcher';

// Why a file of its own: when a claim call goes is due-claims.ts's, how completions are batched is
// completion-batcher.ts's; putting both in one socket write needs the claim connection's socket.

/** What claimAtDue calls to claim (FireCommands.claim, or RidingClaims). */
export type ClaimCalls = Pick<FireCommands, 'claim'>;

/** Whether completions can ride on `redis`'s claim calls: one socket to one Redis (not a Cluster's). */
export function canRide(redis: RedisClient): boolean {
  return redis instanceof Redis;
}

/**
 * Claim calls that carry, in the same socket write, the completions whose linger is over
 * (CompletionBatcher `ride`). At 1,000 runs/s a claim goes about every millisecond and a completion
 * batch every ~5: each socket write that wakes Redis costs the worker ~10–30 µs of CPU (docs/design.md
 * "Node CPU per fired timer"), and Redis a read of its own. The claim is written first (the socket is
 * corked for both), so Redis answers it before it runs the batch; the batch then waits in Redis's queue instead of on a connection
 * of its own, as any call behind the running one does.
 */
export class RidingClaims implements ClaimCalls {
  constructor(
    private readonly redis: RedisClient,
    private readonly claims: FireCommands,
    private readonly batcher: CompletionBatcher,
  ) {}

  claim(
    partition: number,
    leaseMs: number,
    workerId: string,
    refs: TimerRef[],
    slotsChecked?: boolean,
    aheadMs?: number,
    lacking?: readonly string[],
  ): Promise<ClaimResult[]> {
    // Written at once only on a ready connection; otherwise ioredis queues the calls and nothing rides.
    const socket =
      this.redis instanceof Redis && this.redis.status === 'ready' ? this.redis.stream : undefined;
    if (!socket) return this.claims.claim(partition, leaseMs, workerId, refs, slotsChecked, aheadMs, lacking);
    socket.cork();
    try {
      // the call's write happens in this turn (ioredis writes a command as it is sent)
      const claimed = this.claims.claim(partition, leaseMs, workerId, refs, slotsChecked, aheadMs, lacking);
      this.batcher.ride(this.claims);
      return claimed;
    } finally {
      socket.uncork();
    }
  }
}

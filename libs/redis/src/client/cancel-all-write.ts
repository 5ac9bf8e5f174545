import type { SundialLogger } from '@sundial/core';
import type { RedisClient } from '../infra/connection';
import type { SundialObserver } from '../metrics/observer';
import type { SundialKeys } from '../store/keys';
import type { CallRequests } from '../store/requests';
import type { StoreCommands } from '../store/store-commands';

/**
 * `cancelAll(scope)` over every partition (RedisTimers), and what it tells after its calls: the metric
 * (`sundial_timers_cancelled_total`) counts only the cancels of the calls that ran now, not those given
 * again from a first answer (store/replayed.ts); a global one (`prefix` '') publishes one `reset` event.
 * With `sweeps` (the `cancelAllRecords` option) the calls mark the keys for a scope record per partition
 * and answer the count; what the records cover is settled after (`ScopeSweeps`), not while the caller waits.
 */
export async function cancelAllWrite(
  store: { redis: RedisClient; keys: SundialKeys; commands: StoreCommands; observer?: SundialObserver },
  prefix: string,
  requests: CallRequests,
  sweeps?: ScopeSweeps,
): Promise<number> {
  const { redis, keys, commands } = store;
  const reason = prefix ? 'cancelled' : 'reset';
  const partitions = keys.all();
  const done = await Promise.all(
    partitions.map((n) => commands.cancels.cancelAll(n, prefix, reason, requests, sweeps !== undefined)),
  );
  done.forEach(({ marked }, i) => marked && sweeps?.start(partitions[i]));
  const count = done.reduce((sum, { cancelled }) => sum + cancelled, 0);
  store.observer?.cancelled?.({ count: done.reduce((sum, { fresh }) => sum + fresh, 0) });
  if (!prefix && (await firstReset(redis, keys, requests))) {
    const at = Math.max(...done.map(({ at }) => at));
    const reset = { type: 'reset', id: '', key: '', version: 0, kind: null, at, count };
    await redis.publish(keys.eventsChannel, JSON.stringify(reset));
  }
  return count;
}

/**
 * Whether this call publishes the request's `reset`. A fresh request has no twin: yes. The calls of a
 * caller's request (a retry, or a twin sent at once, perhaps from another replica) each find some of
 * their script calls given again, so that cannot tell which of them publishes: the first to claim
 * `q:<request id>:reset` (SET NX, remembered for the request's window) does — a retry of a call cut off
 * before it published still does, a retry of one that published does not.
 */
async function firstReset(redis: RedisClient, keys: SundialKeys, requests: CallRequests): Promise<boolean> {
  if (!requests.named) return true;
  const { id, memoryMs } = requests('reset');
  const claim = `${keys.base(keys.all()[0])}q:${id}`;
  return (await redis.set(claim, '1', 'PX', Math.max(1, Math.round(memoryMs)), 'NX')) === 'OK';
}

/**
 * The sweeps of this client's scope records (cancel-all.lua 'sweep'), run after its cancelAll answered:
 * `close` (dispose) waits for them. One cut off (Redis away) leaves its record, which every reader still
 * applies; it is settled by the scripts that touch its keys and by the next sweep of that partition.
 */
export class ScopeSweeps {
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly commands: StoreCommands,
    private readonly logger: SundialLogger,
  ) {}

  start(partition: number): void {
    const sweep = this.commands.cancels
      .sweep(partition)
      .catch((error: unknown) =>
        this.logger.warn(
          `cancelAll: the sweep of partition ${partition}'s scope record was cut off: ${String(error)}`,
        ),
      )
      .finally(() => this.running.delete(sweep));
    this.running.add(sweep);
  }

  async close(): Promise<void> {
    await Promise.all(this.running);
  }
}

import { runScript } from '@sundial/redis';
import type Redis from 'ioredis';
import type { FireCluster } from './fire-fixture';

/**
 * Raw looks at a cancelAll's scope records on the suite's Redis (`fire.raw`, read at each call: the
 * fixture opens it in its beforeAll).
 */
export function scopeRecordCalls(fire: { raw: Redis }) {
  return {
    /** Whether partition 0 still holds a scope record or a key it covers (its `sc` and `scm`). */
    async recordsLeft(prefix: string): Promise<number> {
      const names = await fire.raw.keys(`${prefix}:{p0}:sc*`);
      return names.filter((name) => !name.endsWith(':scn')).length;
    },
    /** cancel-all.lua in `mode` on partition 0, as a client whose sweep never came would have left it. */
    async cancelAllCall(cluster: FireCluster, mode: string, scope: string): Promise<string[]> {
      const { keys } = cluster.timers;
      const args = [86_400_000, scope, 1000, 'cancelled', mode, ''];
      const reply = await runScript(
        fire.raw,
        'cancel-all',
        keys.base(0),
        keys.ledgerSize,
        keys.prefix,
        ...args,
      );
      return (reply as unknown[]).map(String);
    },
  };
}

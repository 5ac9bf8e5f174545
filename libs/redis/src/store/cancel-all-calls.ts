import type { SundialKeys } from './keys';
import { replayOf } from './replayed';
import { type CallRequests, resendSafe, type ScriptRequest } from './requests';
import type { ScriptArg, ScriptName } from './script-loader';
import type { StoreSettings } from './store-commands';

/** cancel-all calls in flight per partition: RedisClient never waits for the client between batches. */
const CANCEL_ALL_IN_FLIGHT = 4;

/** A store script run with a write's ARGV[1] (the layout fence, the prefix, the call's request). */
type WriteRun = (
  script: ScriptName,
  base: string,
  request: ScriptRequest,
  ...args: ScriptArg[]
) => Promise<unknown>;

/**
 * The calls of cancel-all.lua (StoreCommands.cancels): a cancelAll's batches in one partition, and with
 * scope records (docs/design.md "The cancelAll scope record") the sweep of the partition's record and a
 * read's settle of one key.
 */
export class CancelAllCalls {
  constructor(
    private readonly keys: SundialKeys,
    private readonly run: WriteRun,
    private readonly settings: StoreSettings,
  ) {}

  /**
   * Cancels a scope in one partition, CANCEL_ALL_IN_FLIGHT batches sent at a time (each call takes the
   * first keys still indexed, so they never overlap) until a round's last call says nothing is left.
   * `fresh`: the cancels of the calls that ran now, not answered again for the caller's request
   * (store/replayed.ts), so each cancel is counted once. With `records`, the batches mark their keys
   * for the partition's scope record instead (cancel-all.lua 'mark': the first call alone opens it),
   * which `sweep` then settles; `marked`: some were.
   */
  async cancelAll(
    partition: number,
    scope: string,
    reason: string,
    requests: CallRequests,
    records = false,
  ): Promise<{ cancelled: number; fresh: number; at: number; marked: boolean }> {
    const { tombstoneMs, cancelBatch } = this.settings;
    const base = this.keys.base(partition);
    let [cancelled, fresh, at, rid, marked] = [0, 0, 0, '', false];
    for (let more = true, rounds = 0; more; rounds++) {
      const slots = records && rid === '' ? 1 : CANCEL_ALL_IN_FLIGHT;
      const round = await Promise.all(
        Array.from({ length: slots }, async (_, slot) => {
          const request = requests(`${partition}.${rounds}.${slot}`);
          const args = [tombstoneMs, scope, cancelBatch, reason, records ? 'mark' : '', rid];
          const raw = await this.run('cancel-all', base, request, ...args);
          return replayOf<[number, number, string, string]>(raw, requests);
        }),
      );
      for (const { reply, again } of round) {
        const [count, , now, opened] = reply;
        cancelled += count;
        if (!again) fresh += count;
        at = Math.max(at, Number(now));
        rid = opened ?? '';
        marked ||= rid !== '';
      }
      more = round[round.length - 1].reply[1] === 1;
    }
    return { cancelled, fresh, at, marked };
  }

  /** Settles what the partition's scope record still covers (cancel-all.lua 'sweep'), batch by batch. */
  async sweep(partition: number): Promise<void> {
    const base = this.keys.base(partition);
    const args = [this.settings.tombstoneMs, '', this.settings.cancelBatch, '', 'sweep', ''];
    for (let more = true; more;) {
      const reply = (await this.run('cancel-all', base, resendSafe(), ...args)) as number[];
      more = reply[1] === 1;
    }
  }

  /** Settles `key` when the scope record of its partition covers it (cancel-all.lua 'settle'): a read's first step. */
  settle(key: string): Promise<unknown> {
    const args = [this.settings.tombstoneMs, key, 1, '', 'settle', ''];
    return this.run('cancel-all', this.keys.base(this.keys.partitionOf(key)), resendSafe(), ...args);
  }
}

import { refusals } from '@sundial/core';
import type { RedisClient } from '../infra/connection';
import type { KeyMover } from '../repartition/key-mover';
import type { SundialKeys } from '../store/keys';

/** How long a write waits for its key's run in progress, or cancelAll for the repartition, to end. */
const WAIT_MS = 30_000;
const RETRY_MS = 50;

/**
 * A RedisTimers of the new count started during a repartition (docs/design.md "Repartition"): until
 * `P:repartition` is gone, a write first moves its keys to their new partitions (so it never makes a
 * second live row beside one not moved yet), waiting while a key's run is in progress; `cancelAll` waits
 * for the whole repartition (a key between the steps of its move is in no index).
 */
export class RepartitionWindow {
  private over = false;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: SundialKeys,
    readonly mover: KeyMover,
  ) {}

  /** Whether the repartition ended; once it did, it stays so. */
  async finished(): Promise<boolean> {
    this.over ||= (await this.redis.exists(this.keys.repartition)) === 0;
    return this.over;
  }

  async beforeWrite(keys: string[]): Promise<void> {
    if (await this.finished()) return;
    const deadline = Date.now() + WAIT_MS;
    for (
      let { busy } = await this.mover.move(keys);
      busy.length > 0;
      { busy } = await this.mover.move(busy)
    ) {
      if (Date.now() > deadline)
        throw refusals.repartitionWait(`the run in progress of key ${JSON.stringify(busy[0])}`, WAIT_MS);
      await delay(RETRY_MS);
    }
  }

  async untilFinished(): Promise<void> {
    const deadline = Date.now() + WAIT_MS;
    while (!(await this.finished())) {
      if (Date.now() > deadline) throw refusals.repartitionWait('the repartition', WAIT_MS);
      await delay(RETRY_MS * 4);
    }
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

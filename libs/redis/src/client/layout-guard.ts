import { refusals, type SundialLogger } from '@sundial/core';
import type { RedisClient } from '../infra/connection';
import { DataMarker, readMarkers } from '../infra/data-marker';
import { checkPartitionCount, readLayout } from '../infra/partition-count';
import { KeyMover } from '../repartition/key-mover';
import { SundialKeys } from '../store/keys';
import { RepartitionWindow } from './repartition-window';

const SETTLED: Promise<void> = Promise.resolve();

/** A read of the timers that, while a repartition runs, also looks in the old layout. */
export interface LayoutReader {
  previous: SundialKeys | null;
}

/**
 * How a RedisTimers behaves around a repartition (docs/design.md "Repartition"), kept apart from the
 * Timers API itself: a client whose count a repartition replaced refuses instead of answering wrongly;
 * a client that joined one (it has the new count) reads the old layout too and moves a key before writing
 * it, until the repartition ended.
 */
export class LayoutGuard {
  /** set while a repartition this client joined is under way */
  private window: RepartitionWindow | null = null;
  private readonly marker: DataMarker;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: SundialKeys,
    private readonly readers: LayoutReader[],
    private readonly logger: Pick<SundialLogger, 'error'>,
  ) {
    this.marker = new DataMarker(redis, keys);
  }

  /** At connect: remembers the data marker seen (data-marker.ts); joins the repartition the client joined. */
  async start(joining: { from: number } | null): Promise<void> {
    await this.marker.check();
    if (joining) this.join(joining.from);
  }

  /** The data markers now (`P:epoch`, each partition's): what the events connection compares after a reconnect. */
  readMarkers(): Promise<(string | null)[]> {
    return readMarkers(this.redis, this.keys);
  }

  /** This client started during a repartition from `from` partitions to its own count. */
  private join(from: number): void {
    const previous = new SundialKeys(this.keys.prefix, from, this.keys.tagging);
    this.window = new RepartitionWindow(this.redis, this.keys, new KeyMover(this.redis, previous, this.keys));
    for (const reader of this.readers) reader.previous = previous;
  }

  /**
   * A read that found nothing must not be a wrong answer: a client whose count a repartition replaced
   * would look where the timers no longer are.
   */
  async afterMiss<T>(answer: T): Promise<T> {
    await this.check();
    return answer;
  }

  /**
   * Refuses when the timers under our prefix are (being) moved to another count; a client that joined
   * a repartition stops looking in the old layout once it ended.
   */
  async check(): Promise<void> {
    if (this.window) {
      if (await this.window.finished()) this.endWindow();
      return;
    }
    const { count, repartition } = await readLayout(this.redis, this.keys);
    if (!count && !repartition) {
      // `P:partitions` is gone: Redis lost its data (a restart without persistence). Nothing was moved, so
      // the miss is true, and said (once: the marker is written anew); the count is recorded again, as at
      // start, so that another count is refused again.
      const loss = await this.marker.check();
      if (loss)
        this.logger.error(`Sundial: ${loss.message}`, {
          fix: loss.fix,
          since: new Date(loss.since).toISOString(),
        });
      await checkPartitionCount(this.redis, this.keys);
      return;
    }
    const current = repartition ? repartition.to : count;
    if (current !== this.keys.partitions) {
      throw refusals.partitionsMoved(this.keys.prefix, current, this.keys.partitions);
    }
  }

  /**
   * During a repartition this client joined, a write moves its keys first (RepartitionWindow). Outside
   * one (nearly always) it is a settled promise: no async step per write.
   */
  beforeWrite(keys: string[]): Promise<void> {
    return this.window ? this.moveFirst(this.window, keys) : SETTLED;
  }

  /** cancelAll waits for the whole repartition this client joined. */
  async untilFinished(): Promise<void> {
    await this.window?.untilFinished();
  }

  private async moveFirst(window: RepartitionWindow, keys: string[]): Promise<void> {
    await window.beforeWrite(keys);
    if (await window.finished()) this.endWindow();
  }

  private endWindow(): void {
    this.window = null;
    for (const reader of this.readers) reader.previous = null;
  }
}

import { refusals, type SundialLogger } from '@sundial/core';
import type { RedisClient } from '../infra/connection';
import { dataLook, watched } from '../infra/data-look';
import { DataMarker, readMarkers } from '../infra/data-marker';
import { reportDataLoss, reportWritesLost } from '../infra/layout-watch';
import { checkPartitionCount, readLayout } from '../infra/partition-count';
import { ReplicationHistory } from '../infra/replication-history';
import { KeyMover } from '../repartition/key-mover';
import { SundialKeys } from '../store/keys';
import { RepartitionWindow } from './repartition-window';

const SETTLED: Promise<void> = Promise.resolve();
/** How often a client looks at the data markers (as the watches do, infra/layout-watch.ts). */
const DATA_LOOK_MS = 5000;

/** A read of the timers that, while a repartition runs, also looks in the old layout. */
export interface LayoutReader {
  previous: SundialKeys | null;
}

/**
 * How a RedisTimers behaves around a repartition (docs/design.md "Repartition"), kept apart from the
 * Timers API itself: a client whose count a repartition replaced refuses instead of answering wrongly;
 * a client that joined one (it has the new count) reads the old layout too and moves a key before writing
 * it, until the repartition ended. It also watches the data (data-marker.ts) and the failovers that lost
 * writes (replication-history.ts) where no watch does.
 */
export class LayoutGuard {
  /** set while a repartition this client joined is under way */
  private window: RepartitionWindow | null = null;
  private readonly marker: DataMarker;
  private readonly history: ReplicationHistory;
  /** one look at the data markers, telling a loss once per process (`Sundial: Redis lost …`) */
  private readonly lookAtData: () => Promise<void>;
  private dataTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: SundialKeys,
    private readonly readers: LayoutReader[],
    logger: Pick<SundialLogger, 'error'>,
  ) {
    this.marker = new DataMarker(redis, keys);
    this.history = new ReplicationHistory(redis, keys);
    // The watches' line, led by `Sundial:`; no counter (a client has no metrics registry).
    const say: typeof logger = { error: (message, fields) => logger.error(`Sundial: ${message}`, fields) };
    const onDataLost = reportDataLoss(say, { dataLost: () => undefined });
    const onWritesLost = reportWritesLost(say, { writesLost: () => undefined });
    const { history } = this;
    const stopped = () => this.closed;
    this.lookAtData = dataLook({ marker: this.marker, onDataLost, history, onWritesLost, stopped });
  }

  /**
   * At connect: remembers the data markers seen (data-marker.ts), and from then looks at them every 5 s
   * and at each reconnect (`lookUnlessWatched`). Joins the repartition the client joined.
   */
  async start(joining: { from: number } | null): Promise<void> {
    await this.marker.check();
    await this.history.check().catch(() => undefined); // remembered; a Redis without INFO: not watched
    if (joining) this.join(joining.from);
    if (this.dataTimer) return;
    const look = () => void this.lookUnlessWatched();
    this.dataTimer = setInterval(look, DATA_LOOK_MS);
    this.dataTimer.unref();
    this.redis.on('ready', look);
  }

  /**
   * A look at the data markers, unless a watch runs on the prefix in this process: that one says the loss
   * and counts it (`sundial_redis_data_lost_total`), which it would not once the client said it.
   */
  private async lookUnlessWatched(): Promise<void> {
    if (!watched(this.keys.prefix)) await this.lookAtData();
  }

  /** Stops the looks (the client is disposed). */
  close(): void {
    this.closed = true;
    clearInterval(this.dataTimer);
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
      // the miss is true, and said now (once: the marker is written anew); the count is recorded again,
      // as at start, so that another count is refused again.
      await this.lookUnlessWatched();
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

import { consoleLogger, OptionReader, type SundialLogger } from '@sundial/core';
import type { ClusterClock } from '../infra/cluster-clock';
import { Partitioned, type PartitionedOptions } from '../infra/partitioned';
import { CLOSE_REDIS_WAIT_MS, settledWithin } from '../infra/settled-within';
import { type ServeOptions, servedPartitions } from '../infra/served-partitions';
import type { ReconcileCounts, SundialObserver } from '../metrics/observer';
import { FireCommands } from '../store/fire-commands';
import { migrateLiveIds } from '../store/live-ids-migration';
import { lostCompletion } from './completion';
import { HAND_BACK_KEYS_NAMED, lostLine } from './hand-back-line';
import { DEFAULT_RECONCILE_MS } from '../option-defaults';

export interface ReconcilerOptions extends PartitionedOptions, ServeOptions {
  /** pause between passes (SUNDIAL_RECONCILE_MS, default 5000 ms): bounds how late a lost timer can be */
  intervalMs?: number;
  /** how long an armed timer may be overdue before its missing job counts as lost (default 2000 ms) */
  graceMs?: number;
  /** entries examined per partition per pass (default 1000) */
  batchLimit?: number;
  /** told each pass's counts and the slots skipped by the lost runs it settles (metrics: SundialMetrics) */
  observer?: SundialObserver;
  logger?: SundialLogger;
}

const DEFAULT_GRACE_MS = 2000;
const DEFAULT_BATCH_LIMIT = 1000;

/**
 * One reconcile pass over a partition: reconcile.lua re-arms and requeues, then the lost at-most-once
 * runs it reports are settled through complete.lua (a cron's next occurrence is computed here, in JS).
 * Idempotent: replicas racing on the same partition settle each run once.
 */
export async function reconcilePartition(
  commands: FireCommands,
  clock: ClusterClock,
  partition: number,
  graceMs: number,
  batchLimit: number,
  observer: SundialObserver = {},
  logger?: SundialLogger,
): Promise<ReconcileCounts> {
  const result = await commands.reconcile(partition, graceMs, batchLimit);
  const lostKeys: string[] = [];
  if (result.lost.length > 0) {
    const now = clock.now();
    const settled = await commands.complete(
      partition,
      result.lost.map((fields) => lostCompletion(fields, now)),
    );
    for (const [i, reply] of settled.entries()) {
      if (reply.kind !== 'done') continue; // another replica settled it first
      lostKeys.push(result.lost[i].key);
      if (reply.missed > 0) observer.skipped?.({ reason: 'missed', count: reply.missed });
      if (reply.overlap > 0) observer.skipped?.({ reason: 'overlap', count: reply.overlap });
    }
  }
  if (lostKeys.length > 0)
    logger?.warn(lostLine(lostKeys), { partition, keys: lostKeys.slice(0, HAND_BACK_KEYS_NAMED) });
  return { rearmed: result.rearmed, requeued: result.requeued, lost: lostKeys.length };
}

/**
 * The periodic safety net of the fire path (docs/spec.md §3.8, §4.3), in every scheduler replica, no leader:
 * armed timers whose job vanished go back to `due`, expired leases are settled, and live ids an older
 * version wrote (`ids` hash) become bits, in the partitions it serves (`serve`, default all).
 */
export class Reconciler extends Partitioned<FireCommands> {
  private readonly intervalMs: number;
  private readonly graceMs: number;
  private readonly batchLimit: number;
  private readonly logger: SundialLogger;
  private readonly observer: SundialObserver;
  private readonly served: number[];
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private closed = false;

  constructor(options: ReconcilerOptions) {
    const served = servedPartitions(options); // before any connection opens: a bad list changes nothing
    // the pause between passes is a Node timer: past the longest one the passes ran back to back
    OptionReader.of('Reconciler', options, "{ connection: 'redis://127.0.0.1:6379' }").timerMs(
      'intervalMs',
      1,
      '5000',
    );
    super(options, (redis, keys) => new FireCommands(redis, keys));
    this.served = served;
    this.intervalMs = options.intervalMs ?? DEFAULT_RECONCILE_MS;
    this.graceMs = options.graceMs ?? DEFAULT_GRACE_MS;
    this.batchLimit = options.batchLimit ?? DEFAULT_BATCH_LIMIT;
    this.logger = options.logger ?? consoleLogger;
    this.observer = options.observer ?? {};
  }

  start(): void {
    this.schedulePass();
  }

  /** One pass over every served partition; what `start` repeats. */
  async reconcileOnce(): Promise<ReconcileCounts> {
    const totals: ReconcileCounts = { rearmed: 0, requeued: 0, lost: 0 };
    await this.clock.sync(1);
    // Every process converts at start: ids found here were written since, by a process of a version
    // before the live-id bitmaps, which must not run beside this one (docs/operations.md "Upgrading").
    const converted = await migrateLiveIds(this.redis, this.keys, this.served);
    if (converted > 0) {
      this.logger.warn(
        'converted live ids an older Sundial version wrote (P:{pN}:ids): stop every process of that version',
        { converted },
      );
    }
    for (const partition of this.served) {
      const counts = await reconcilePartition(
        this.commands,
        this.clock,
        partition,
        this.graceMs,
        this.batchLimit,
        this.observer,
        this.logger,
      );
      // a cancelAll's scope record whose client stopped sweeping: a batch a pass (readers settle the rest)
      await this.commands.sweepRecord(partition, this.batchLimit);
      totals.rearmed += counts.rearmed;
      totals.requeued += counts.requeued;
      totals.lost += counts.lost;
    }
    this.observer.reconciled?.(totals);
    if (totals.rearmed + totals.requeued + totals.lost > 0) this.logger.info('reconciled', { ...totals });
    return totals;
  }

  /**
   * Stops the passes: a pass under way gets CLOSE_REDIS_WAIT_MS (3 s) to end, then the connection is dropped (on
   * a frozen Redis it would never end, and the scheduler's shutdown ran into its 15 s cap and exited 1).
   * A pass cut so is logged; what Redis runs of it later is a pass as any (each script is one atomic step).
   */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    if (this.running) await settledWithin(this.running, CLOSE_REDIS_WAIT_MS);
    await this.closeConnection();
  }

  private schedulePass(): void {
    if (this.closed) return;
    this.timer = setTimeout(() => {
      this.running = this.reconcileOnce()
        .then(
          () => undefined,
          (error: Error) => this.logger.error(`Sundial reconciler: ${error.message}`),
        )
        .finally(() => this.schedulePass());
    }, this.intervalMs);
  }
}

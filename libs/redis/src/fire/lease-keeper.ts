import type { SundialLogger } from '@sundial/core';
import type { RedisClient } from '../infra/connection';
import type { ClusterClock } from '../infra/cluster-clock';
import { closeRedis, openRedis, type RedisConnection } from '../infra/connection';
import { startSubscribeLimitMs, SUBSCRIBER_OPTIONS, Subscription } from '../infra/subscription';
import type { SundialObserver } from '../metrics/observer';
import type { FireCommands, LeaseRef, LeaseRenewal, RunMode } from '../store/fire-commands';
import type { SundialKeys } from '../store/keys';
import { handBackLine } from './hand-back-line';
import { reconcilePartition } from './reconciler';

/** A run in progress on this worker. */
export interface ActiveRun extends LeaseRef {
  partition: number;
  id: string;
  version: number;
  mode: RunMode;
  /** its timer's delivery is at-most-once (row field `dl` 'm'): handed back, it is recorded lost, not run again */
  atMostOnce: boolean;
  /** made when the handler first reads `ctx.signal` or the run is aborted: most runs need none */
  controller?: AbortController;
  /** handed back at shutdown: its outcome is no longer this worker's to record */
  released: boolean;
  /** its handler was called: handed back before, an at-most-once run runs again elsewhere (never ran here) */
  started: boolean;
  /** its handler finished; its completion is being sent (through an outage too): its lease is kept */
  completing?: boolean;
  /** lets the job finish without waiting for a handler that ignores its signal (set while one goes on) */
  letGo: (() => void) | undefined;
  /** the abort warns already logged for it: a handler that ignores its signal keeps its run renewed, each renewal saying the same */
  warned?: Set<string>;
}

export interface LeaseKeeperOptions {
  connection: RedisConnection;
  keys: SundialKeys;
  commands: FireCommands;
  clock: ClusterClock;
  workerId: string;
  leaseMs: number;
  logger: SundialLogger;
  /** told the counts of the reconcile that settles a hand-back (metrics: SundialMetrics) */
  observer: SundialObserver;
  /** a runner announced a handler new to a partition (`P:handlers`, handler-presence.ts) */
  onHandlersAnnounced?: () => void;
}

/** An abort heard on `P:abort`: which runs it stops (a key and id, versions up to `version`) and when it came. */
interface HeardAbort {
  key: string;
  id: string;
  version: number;
  at: number;
}

/** What the worker's own reconcile pass at shutdown uses (it only needs the lease part to be prompt). */
const SHUTDOWN_RECONCILE = { graceMs: 2000, batchLimit: 1000 };

/**
 * The leases and abort signals of a worker's runs (docs/spec.md §3.8, §4.5, §4.6), beside TimerRunner as BullMQ
 * keeps lock-manager.ts beside worker.ts: renews every lease (held and free runs) each leaseMs / 3, aborts a run whose
 * lease is gone or whose entry changed (`P:abort`), and hands runs back at shutdown.
 */
export class LeaseKeeper {
  private readonly active = new Set<ActiveRun>();
  /**
   * Aborts heard in the last lease, by key. Why: a run is added only once its claim's answer is back (and a
   * cron's detach done); an abort published by a cancel / pause / reschedule in between names a run this
   * worker does not know yet. A held run would still be aborted at its next renewal, a free run (its lease
   * survives a pause or reschedule) never. `add` applies them; the renewal tick forgets those older than a
   * lease (a claim answered later than that has lost its lease anyway).
   */
  private readonly heard = new Map<string, HeardAbort[]>();
  private readonly subscriber: RedisClient;
  private subscription: Subscription | undefined;
  private renewal: NodeJS.Timeout | undefined;

  constructor(private readonly options: LeaseKeeperOptions) {
    // opened by start()'s SUBSCRIBE (lazyConnect): a runner never started holds no socket
    this.subscriber = openRedis(options.connection, { ...SUBSCRIBER_OPTIONS, lazyConnect: true });
  }

  /** Listens for aborts (before any run starts, so a cancel reaches every run) and starts renewing. */
  async start(): Promise<void> {
    const { keys, onHandlersAnnounced } = this.options;
    const channel = keys.abortChannel;
    // The same connection hears a new handler's announcement (rare): the worker learns at once that it lacks it.
    const handlers = keys.handlersChannel;
    this.subscriber.on('message', (heard: string, message: string) => {
      if (heard === channel) this.onAbort(message);
      else onHandlersAnnounced?.();
    });
    const channels = onHandlersAnnounced ? [channel, handlers] : [channel];
    // Kept subscribed for the worker's life; start waits through a short outage (dispatcher.ts).
    this.subscription = new Subscription(this.subscriber, channels, channel, this.options.logger);
    await this.subscription.confirmedWithin(startSubscribeLimitMs());
    const everyMs = Math.max(1, Math.floor(this.options.leaseMs / 3));
    this.renewal = setInterval(() => void this.renewLeases(), everyMs);
  }

  add(run: ActiveRun): void {
    this.active.add(run);
    for (const target of this.heard.get(run.key) ?? []) abortIfNamed(target, run);
  }

  delete(run: ActiveRun): void {
    this.active.delete(run);
  }

  /** The runs in progress now. */
  runs(): ActiveRun[] {
    return [...this.active];
  }

  /**
   * Shutdown: abort, stop waiting for, and release the claims of runs that did not finish in time, and say
   * which timers they were (one warn line). Resolves whether Redis took every release.
   */
  async handBack(runs: ActiveRun[]): Promise<boolean> {
    const { commands, clock, workerId, observer } = this.options;
    if (runs.length > 0) {
      const { message, fields } = handBackLine(runs);
      this.options.logger.warn(message, { workerId, ...fields });
    }
    for (const run of runs) {
      run.released = true;
      abort(run, 'the worker is shutting down');
      run.letGo?.();
    }
    let released = true;
    for (const [partition, held] of byPartition(runs)) {
      try {
        const unstarted = held.filter((run) => !run.started);
        if (unstarted.length > 0) await commands.release(partition, workerId, unstarted.map(leaseRef), true);
        const started = held.filter((run) => run.started);
        if (started.length > 0) await commands.release(partition, workerId, started.map(leaseRef));
        const { graceMs, batchLimit } = SHUTDOWN_RECONCILE;
        // its settlements are this process's to count: the runs recorded lost or put back to run again
        const counts = await reconcilePartition(commands, clock, partition, graceMs, batchLimit, observer);
        observer.reconciled?.(counts);
      } catch (error) {
        released = false;
        this.options.logger.error(`Sundial could not release claims: ${(error as Error).message}`, {
          partition,
          keys: held.map((run) => run.key),
        });
      }
    }
    return released;
  }

  async close(): Promise<void> {
    clearInterval(this.renewal);
    this.subscription?.close();
    await closeRedis(this.subscriber);
  }

  /**
   * Extends every lease (held and free runs); a run whose lease is gone (reclaimed, settled lost) is aborted,
   * and so is a free run whose timer was cancelled, replaced, paused or rescheduled: its lease survives
   * that, and the `P:abort` message may not have reached this worker (its subscriber was reconnecting).
   */
  private async renewLeases(): Promise<void> {
    const { commands, leaseMs, workerId } = this.options;
    this.forgetHeard(Date.now() - leaseMs);
    for (const [partition, runs] of byPartition(this.runs())) {
      try {
        const renewals = await commands.renewLeases(partition, leaseMs, workerId, runs.map(leaseRef));
        runs.forEach((run, i) => this.renewed(run, renewals[i]));
      } catch (error) {
        this.options.logger.error(`Sundial could not renew leases: ${(error as Error).message}`, {
          partition,
          keys: runs.map((run) => run.key),
        });
      }
    }
  }

  /** Acts on a run's renewal: a lost lease aborts it, and so does an abort whose message it missed. */
  private renewed(run: ActiveRun, renewal: LeaseRenewal): void {
    // A completing run's handler has ended: a renewal that reached Redis after its completion finds the
    // lease gone because the run was recorded, and a lease really lost makes that completion stale (its
    // own line). Aborting it would stop nothing; saying `lease lost` would be false.
    if (renewal === 'lost' && run.completing) return;
    if (renewal === 'lost') {
      this.aborting(run, 'lease lost (reclaimed or settled lost)');
      abort(run, `the lease on ${run.key} v${run.version} was lost`);
    } else if (renewal === 'aborted' && abortNamed(run)) {
      // (such a run is renewed until it completes: said once, and only when the message did not reach it)
      this.aborting(run, 'abort message missed (its timer was cancelled, replaced or rescheduled)');
    }
  }

  /**
   * Says why the run is aborted, once per run and reason: a handler that ignores its signal runs on, and
   * each renewal (every leaseMs / 3) found the same lost lease — a warn every 10 s for as long as it ran.
   */
  private aborting(run: ActiveRun, why: string): void {
    run.warned ??= new Set();
    if (run.warned.has(why)) return;
    run.warned.add(why);
    const { key, id, version, partition } = run;
    this.options.logger.warn(`${why}: the run is aborted`, { key, id, version, partition });
  }

  /**
   * Stops the local runs of an entry that was cancelled, replaced, rescheduled or paused (docs/spec.md §4.5),
   * and remembers the abort for a run whose claim's answer is still on its way (`heard`).
   */
  private onAbort(message: string): void {
    const target = { ...(JSON.parse(message) as Omit<HeardAbort, 'at'>), at: Date.now() };
    const known = this.heard.get(target.key);
    if (known) known.push(target);
    else this.heard.set(target.key, [target]);
    for (const run of this.active) abortIfNamed(target, run);
  }

  /** Drops the aborts heard before `before` (ms, local clock). */
  private forgetHeard(before: number): void {
    for (const [key, targets] of this.heard) {
      const kept = targets.filter((target) => target.at >= before);
      if (kept.length === 0) this.heard.delete(key);
      else if (kept.length < targets.length) this.heard.set(key, kept);
    }
  }
}

/** Aborts the run when the abort names it: its key and id, and a version up to the abort's. */
function abortIfNamed(target: HeardAbort, run: ActiveRun): void {
  if (run.key === target.key && run.id === target.id && run.version <= target.version) abortNamed(run);
}

/** Aborts a run whose timer was cancelled, replaced or rescheduled; false when it was aborted already. */
function abortNamed(run: ActiveRun): boolean {
  return abort(run, `${run.key} v${run.version} was cancelled, replaced or rescheduled`);
}

/** A run's AbortController, made on first need (making one costs more than a short run itself). */
export function controllerOf(run: ActiveRun): AbortController {
  run.controller ??= new AbortController();
  return run.controller;
}

/** Aborts the run's signal with an AbortError; false when it was aborted already. */
function abort(run: ActiveRun, why: string): boolean {
  const controller = controllerOf(run);
  if (controller.signal.aborted) return false;
  const reason = new Error(why);
  reason.name = 'AbortError';
  controller.abort(reason);
  return true;
}

/** A free run's lease is named `<key>|<version>` (docs/design.md "Free runs"), a held run's by its key. */
function leaseRef(run: ActiveRun): LeaseRef {
  return { key: run.mode === 'free' ? `${run.key}|${run.version}` : run.key, runCount: run.runCount };
}

/** Linear: a renewal of thousands of runs must not stall the event loop (copying each group per run did). */
function byPartition(runs: ActiveRun[]): Map<number, ActiveRun[]> {
  const groups = new Map<number, ActiveRun[]>();
  for (const run of runs) {
    const group = groups.get(run.partition);
    if (group) group.push(run);
    else groups.set(run.partition, [run]);
  }
  return groups;
}

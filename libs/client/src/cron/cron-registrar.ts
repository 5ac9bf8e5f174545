import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
  Optional,
} from '@nestjs/common';
import { HttpAdapterHost, ModuleRef } from '@nestjs/core';
import {
  ensureOwnedRow,
  normalizeSpec,
  removeOwnedRows,
  type RowOwner,
  type SpecLimits,
  type Timer,
  type TimerSpec,
} from '@sundial/core';
import { type DiscoveredRow, TimerHandlerRegistry } from '../handler-registry';
import { SUNDIAL_MODULE_OPTIONS } from '../sundial.module-definition';
import type { SundialModuleOptions } from '../sundial-module-options';
import { connectBackend } from '../create-backend';
import { Timers } from '../timers';
import { OWN_RUNNER_WAIT_MS, OwnRunner } from '../own-runner';
import { cronRowOwner, ROW_KINDS, type RowSchedule, rowKey, rowSpec } from './cron-rows';
import { decoratorOf, rowRefusal, withOwner } from './row-refusal';
import { checked, windowOver, withOverlap } from './row-checks';
import { RowSources } from './row-sources';
import { declarationSetHash } from './declaration-set';
import type { DeclarationTurns } from './declaration-turns';
import { DEFAULT_CRON_REFRESH_MS, turnsOf } from './declaration-turns';
import { onStartFailure, type StopWatchingStart } from './start-failure';

const DEFAULT_APP = 'app';

/** A declared row and the spec it is written as. */
interface DeclaredRow {
  row: DiscoveredRow;
  spec: TimerSpec;
}

/**
 * Keeps one row per `@DistributedCron` and `@DistributedInterval` (docs/spec.md §5.1), at every boot of
 * every replica whose declared set is the newest (DeclarationTurns: during a rolling deploy, an older
 * build's replica writes nothing until the newer build's are gone): creates the missing ones, replaces those whose expression, zone, period, delivery or
 * policies changed, and removes the rows this app
 * owns whose decorator is gone or `disabled`. Replicas booting together converge on one row per name: a
 * create that loses the race finds the winner's row equal to its own. Rows without this app's owner
 * marker (created through the API) are never touched. After a global `cancelAll()` (`reset`) it
 * registers its rows again (an app that declares none does not listen for it). In an app that runs its
 * handlers too (SundialWorkerModule), the boot writes once the app's runner announced them (OwnRunner).
 */
@Injectable()
export class CronRegistrar implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Sundial');
  private readonly app: string;
  /** whether the app named itself (`appName`), or goes by the default every unnamed service shares */
  private readonly named: boolean;
  private readonly owner: RowOwner;
  private readonly sources: RowSources;
  private readonly refreshMs: number;
  /** the app's `limits`: a row is checked and compared as the backend checks it */
  private readonly limits: SpecLimits;
  private stopFollowingReset = (): void => undefined;
  private stopWatchingStart: StopWatchingStart = () => undefined;
  /** the withdrawal of a replica that did not start, awaited by the close */
  private withdrawn: Promise<void> | undefined;
  private declared: DeclaredRow[] | undefined;
  private turns: DeclarationTurns | null = null;
  private setUp: Promise<void> | undefined;
  private booted: Promise<void> | undefined;

  constructor(
    @Inject(Timers) private readonly timers: Timers,
    @Inject(TimerHandlerRegistry) private readonly registry: TimerHandlerRegistry,
    @Inject(ModuleRef) moduleRef: ModuleRef,
    @Inject(SUNDIAL_MODULE_OPTIONS) options: SundialModuleOptions,
    @Inject(OwnRunner) private readonly own: OwnRunner,
    @Optional() @Inject(HttpAdapterHost) private readonly http?: HttpAdapterHost,
  ) {
    this.app = options.appName ?? DEFAULT_APP;
    this.named = options.appName !== undefined;
    this.limits = options.limits ?? {};
    this.owner = cronRowOwner(this.app, this.limits);
    this.sources = new RowSources(moduleRef);
    this.refreshMs =
      (options.backend === 'memory' ? undefined : options.cronRefreshMs) ?? DEFAULT_CRON_REFRESH_MS;
  }

  async onApplicationBootstrap(): Promise<void> {
    // The boot's first touch of Redis (every SundialModule app has this hook): a Redis away for a moment
    // is waited for here, not met by the pass's first call failing the boot (`unavailable`).
    await connectBackend(this.timers);
    // Only an app with crons to register again listens: a listener on `P:events` makes every script
    // build and publish its events (docs/design.md "Events"), a cost on every timer of every app. It
    // listens before the first pass, whose calls wait for the subscription (RedisTimers): a reset from
    // the moment the app is up on is seen.
    if (this.registry.crons.some((cron) => !cron.disabled)) {
      this.stopFollowingReset = this.timers.on('reset', () => void this.afterReset().catch(this.resetFailed));
    }
    this.setUp = this.setUpTurns();
    await this.setUp;
    // The app's later bootstrap hooks and its listen come after this hook: failing, the replica withdraws
    // the set the boot's pass announced.
    if (this.turns) this.stopWatchingStart = onStartFailure(this.http, (why) => this.startFailed(why));
    // Awaited here, or by the worker's start when its hook comes later (OwnRunner: awaited here, the
    // announcement it waits for would never come).
    this.booted = this.boot();
    await this.own.hold(this.booted, (error) =>
      this.logger.error(
        `appName '${this.app}': @DistributedCron/@DistributedInterval rows not written: ${String(error)}`,
      ),
    );
  }

  /**
   * The boot's pass, then the looks. With rows to write in an app whose runner serves their handlers, it
   * waits for the runner's announcement: a newer build's first replica wrote a new cron's row before, and
   * a slot due in between went to an older worker that knew of no worker with the handler
   * (`unknown-handler`). Once announced, the older workers pass such runs on (docs/spec.md §3.2).
   */
  private async boot(): Promise<void> {
    if (this.declared?.length) {
      const wait = await this.own.announced();
      if (wait === 'closed') return;
      if (wait === 'late') {
        this.logger.warn(
          `appName '${this.app}': this app's SundialWorker has not announced its handlers within ${OWN_RUNNER_WAIT_MS / 1000} s of the boot ` +
            `(autoStart: false and not started yet, or its start failed): the @DistributedCron/@DistributedInterval rows are written now, ` +
            `and a slot due before a worker with the handler announced it fails unknown-handler on a worker without it.`,
        );
      }
    }
    await this.turn('boot');
    this.turns?.start(() => this.pass());
  }

  /** The declared rows, and this replica's turns (none: every pass is its own). */
  private async setUpTurns(): Promise<void> {
    // Resolved before anything is written: a source or option the boot refuses writes no row.
    const declared = (this.declared = await this.declare());
    // An app that declares nothing under the default name writes and removes nothing (sync): it
    // announces no set either, which would stand for the crons' own app and silence it.
    if (!this.named && this.registry.crons.length === 0) return;
    const set = declarationSetHash(declared.map(({ spec }) => spec));
    this.turns = turnsOf(this.timers, this.app, set, this.refreshMs, this.logger);
  }

  /**
   * The app did not start after the boot announced this replica's declaration set (its HTTP server
   * failed to listen, or the process exits or the app closes before it listened: a later bootstrap hook
   * failed): withdrawn, so the other sets' replicas write their rows again instead of deferring to a
   * replica that is not running (docs/spec.md §5.1). Its rows stay until they do. The command is sent
   * before this returns (a process that exits now has sent it).
   */
  private startFailed(why: string): void {
    const turns = this.turns!;
    this.stopFollowingReset();
    const withdrawn = turns.withdraw();
    this.logger.warn(
      `appName '${this.app}': the app did not start (${why}): this replica's @DistributedCron/@DistributedInterval declaration set is withdrawn, ` +
        `so that the replicas already running do not defer to it.`,
    );
    this.withdrawn = withdrawn.catch((failure: unknown) =>
      this.logger.warn(
        `appName '${this.app}': the declaration set of this replica, which did not start, could not be withdrawn (${String(failure)}); it stops counting three cronRefreshMs (${this.refreshMs} ms) after its last announcement.`,
      ),
    );
  }

  async onModuleDestroy(): Promise<void> {
    this.own.closing();
    this.stopWatchingStart(true);
    this.stopFollowingReset();
    await this.withdrawn;
    await this.turns?.stop();
  }

  /**
   * After a reset (a global cancelAll, or Redis lost its data) every row is gone: the replicas of the
   * newest declaration set write their rows again, and remove none (a pass after a data loss may run
   * before the newer build's replicas announced their set again: its rows are not removed as orphans).
   */
  async afterReset(): Promise<void> {
    // a reset during the boot: the turn is asked once the boot's pass is done (its rows not before the
    // app's runner announced their handlers)
    await this.setUp;
    await this.booted;
    await this.turn('boot', false);
  }

  /**
   * A pass after a reset that failed: said (the listener dropped it — on the memory backend the rows
   * stayed gone and nothing said so). On Redis the next look runs the pass again.
   */
  private readonly resetFailed = (error: unknown): void => {
    this.logger.error(
      `appName '${this.app}': the @DistributedCron/@DistributedInterval rows were not written again after a reset: ${String(error)}`,
    );
  };

  /**
   * One pass: every declared row written if it differs, every orphaned owned row removed (not after a
   * reset: afterReset) — except by an
   * app that declares no @DistributedCron/@DistributedInterval and has no `appName` of its own: under the default name, that
   * is as likely another service on the same Redis (an API that only schedules timers) as the crons' own
   * app after its last decorator went, and removing would delete the other service's crons at each of its
   * boots. Such a row is removed by its app, named or with the cron marked `disabled`. On Redis, a
   * replica runs it only when its declaration set is the newest (`turn`, DeclarationTurns).
   */
  async sync({ removeOrphans = true }: { removeOrphans?: boolean } = {}): Promise<void> {
    const declared = (this.declared ??= await this.declare());
    for (const { row, spec } of declared) await this.ensure(row, spec);
    if (!removeOrphans || (!this.named && this.registry.crons.length === 0)) return;
    const keep = new Set(declared.map(({ spec }) => spec.key));
    for (const [kind, { prefix }] of Object.entries(ROW_KINDS)) {
      const decorator = kind === 'cron' ? '@DistributedCron' : '@DistributedInterval';
      for (const key of await removeOwnedRows(this.timers, this.owner, keep, prefix)) {
        // Also what an app does to another's rows under the same appName: said.
        this.logger.warn(
          `removed ${key}: its ${decorator}('${key.slice(prefix.length)}') is gone from this app or disabled (appName '${this.app}'). ` +
            `A service with other ${decorator} methods on this Redis and prefix needs an appName of its own.`,
        );
      }
    }
  }

  /** A pass when this replica's turn (`step`) says so: always on the memory backend. */
  private async turn(step: 'boot' | 'refresh', removeOrphans = true): Promise<void> {
    if (this.turns && !(await this.turns.ask(step))) return;
    await this.pass(removeOrphans);
  }

  /** The pass, its end announced: one that stopped half way is redone at the next look. */
  private async pass(removeOrphans = true): Promise<void> {
    try {
      await this.sync({ removeOrphans });
    } catch (error) {
      await this.turns?.ended(false).catch(() => undefined);
      throw error;
    }
    await this.turns?.ended(true);
  }

  /** Every declared row (not `disabled`) and the spec it is written as, its source read. */
  private async declare(): Promise<DeclaredRow[]> {
    const declared: DeclaredRow[] = [];
    for (const row of this.registry.crons.filter((cron) => !cron.disabled)) {
      const schedule: RowSchedule =
        row.kind === 'cron'
          ? { cron: await this.sources.expression(row), tz: row.timeZone ?? 'UTC' }
          : { every: await this.sources.period(row) };
      declared.push({ row, spec: checked(row, rowSpec(withOverlap(row), schedule, this.app), this.limits) });
    }
    return declared;
  }

  /**
   * `SchedulerRegistry.getCronJobs()`'s counterpart: the rows of this app's `@DistributedCron` and
   * `@DistributedInterval` methods (not `disabled`), as stored now, in the order found — `dueAt` is each
   * one's next run, `status` says whether it is paused. A row cancelled since (until the next boot or
   * reset writes it again) is left out.
   */
  async rows(): Promise<Timer[]> {
    const keys = this.registry.crons.filter((row) => !row.disabled).map(rowKey);
    const rows = await Promise.all(keys.map((key) => this.timers.get(key)));
    return rows.filter((row): row is Timer => row !== null && this.owner.owns(row));
  }

  private async ensure(row: DiscoveredRow, spec: TimerSpec): Promise<void> {
    const outcome = await ensureOwnedRow(this.timers, spec, this.owner).catch((error: unknown) => {
      if (windowOver(spec, error)) return 'ended' as const;
      throw withOwner(row, error);
    });
    if (outcome === 'ended') {
      // Its last slot has passed: the row ended (and was removed) or never started. Nothing to write —
      // and no reason to stop every later boot of an app that keeps a finished campaign's method.
      const stale = await this.timers.get(spec.key);
      if (stale && this.owner.owns(stale)) await this.timers.cancel(spec.key);
      this.logger.warn(
        `${decoratorOf(row)}: not written, its endAt ${new Date(normalizeSpec(spec, {}, true).endAt!).toISOString()} leaves no slot to run. Remove the method, or move endAt.`,
      );
      return;
    }
    if (outcome === 'foreign') {
      throw rowRefusal(
        row,
        'key',
        `the key ${spec.key} holds a timer this app did not create (created through the API or by another app).`,
        `Rename the decorator's row, or cancel ${spec.key} if it is a leftover.`,
      );
    }
  }
}

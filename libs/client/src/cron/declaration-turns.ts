import type { Logger } from '@nestjs/common';
import type { TimersApi } from '@sundial/core';
import { type DeclarationStep, ErrorThrottle, RedisTimers } from '@sundial/redis';

/** How often a replica announces its declaration set and looks whether it became the newest (`cronRefreshMs`). */
export const DEFAULT_CRON_REFRESH_MS = 5_000;
/** An announcement lasts this many periods: a replica gone stops counting after at most three. */
const LIVE_PERIODS = 3;

/** Shortened for the log: enough to tell two builds apart. */
const shown = (set: string): string => set.slice(0, 12);

/**
 * Whose turn it is to write an app's `@DistributedCron` / `@DistributedInterval` rows (docs/spec.md §5.1
 * "rolling deploy"): each replica announces the hash of the set it declares every `everyMs` while the app
 * runs, and only the replicas of the newest set live (first seen latest) run their pass. A replica of
 * an older build that boots during the roll writes nothing and says so once; when the newer replicas are
 * all gone (a rollback), its next look finds its set the newest and runs the pass then. On the memory
 * backend (one process) every pass is this replica's: `turnsOf` returns null.
 */
export class DeclarationTurns {
  private firstSeen: number | undefined;
  private deferring = false;
  private refresher: NodeJS.Timeout | undefined;
  /** the app did not start: this replica announces nothing more */
  private withdrawn = false;
  private inFlight: Promise<void> | undefined;
  /**
   * A pass that keeps failing (Redis refusing a row's write, an ACL) is redone at every look: logged as
   * the first failure, then at most one line each 30 s with a count, and once when a pass runs again —
   * a warn every period (5 s by default) hid everything else in the app's log.
   */
  private readonly failures: ErrorThrottle;

  constructor(
    private readonly timers: RedisTimers,
    private readonly app: string,
    private readonly set: string,
    private readonly everyMs: number,
    private readonly logger: Logger,
  ) {
    this.failures = new ErrorThrottle(
      `appName '${app}': the @DistributedCron/@DistributedInterval pass of this replica's set (${shown(set)}), the newest now`,
      { error: (message) => logger.warn(message), info: (message) => logger.log(message) },
    );
  }

  /** Announces the set; resolves whether this replica runs its pass now (its step marked it begun). */
  async ask(step: 'boot' | 'refresh'): Promise<boolean> {
    const turn = await this.announce(step);
    if (turn.pass) {
      if (this.deferring)
        this.logger.log(
          `appName '${this.app}': the newer @DistributedCron/@DistributedInterval declarations are gone; this replica's (set ${shown(this.set)}) writes its rows now.`,
        );
      this.deferring = false;
      return true;
    }
    const defers = turn.newest !== this.set;
    if (defers && !this.deferring) {
      this.logger.log(
        `appName '${this.app}': this replica's @DistributedCron/@DistributedInterval declarations (set ${shown(this.set)}) defer to a newer declaration set (${shown(turn.newest)}), ` +
          `whose replicas write the rows; this one writes nothing unless that build's replicas are all gone (a rollback). ` +
          `A different service under the same appName needs an appName of its own.`,
      );
    }
    this.deferring = defers;
    return false;
  }

  /** Says the pass this replica began ended (`written`), or stopped before the end (redone at a refresh). */
  async ended(written: boolean): Promise<void> {
    await this.announce(written ? 'done' : 'failed');
  }

  /**
   * Every `everyMs` until `stop`: announces the set and, when its turn came, runs `pass`. One look at a
   * time; a look that fails (Redis away) is the next one's to redo, a failed pass is logged.
   */
  start(pass: () => Promise<void>): void {
    this.refresher = setInterval(() => {
      if (this.inFlight) return;
      this.inFlight = this.ask('refresh')
        .then(
          (turn) =>
            turn
              ? pass().then(
                  () => this.failures.recovered('its pass ran again'),
                  (error: unknown) => this.passFailed(error),
                )
              : undefined,
          () => undefined, // Redis away: the next look announces again
        )
        .finally(() => (this.inFlight = undefined));
    }, this.everyMs);
    this.refresher.unref();
  }

  private passFailed(error: unknown): void {
    if (!this.refresher) return; // the app closes
    this.failures.error(
      new Error(`failed; each look (every ${this.everyMs} ms) runs it again: ${String(error)}`),
    );
  }

  /**
   * The app did not start after all (its HTTP server failed to listen, after the boot's pass): stops the
   * looks and withdraws the set (`withdrawn`), so the other sets' replicas do not defer to it. On a
   * connected client the command is written before this returns: a process that ends on the failure (an
   * unhandled rejection, a `process.exit(1)` in its catch) has sent it.
   */
  async withdraw(): Promise<void> {
    clearInterval(this.refresher);
    this.refresher = undefined;
    const sent = this.announce('withdrawn');
    this.withdrawn = true;
    await sent;
  }

  /** Stops the looks (the app closes), waiting for the one under way. */
  async stop(): Promise<void> {
    clearInterval(this.refresher);
    this.refresher = undefined;
    await this.inFlight;
  }

  private async announce(step: DeclarationStep) {
    // a look or a pass's end still under way when the set was withdrawn would announce it again
    if (this.withdrawn)
      throw new Error(`the declaration set ${shown(this.set)} was withdrawn: the app did not start`);
    const liveMs = this.everyMs * LIVE_PERIODS;
    const turn = await this.timers.declarationTurn(this.app, this.set, step, liveMs, this.firstSeen);
    this.firstSeen = turn.firstSeen;
    return turn;
  }
}

/** The turns of a replica on Redis; null on the memory backend, where every pass is this process's. */
export function turnsOf(
  timers: TimersApi,
  app: string,
  set: string,
  everyMs: number,
  logger: Logger,
): DeclarationTurns | null {
  return timers instanceof RedisTimers ? new DeclarationTurns(timers, app, set, everyMs, logger) : null;
}

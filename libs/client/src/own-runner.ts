/**
 * How long an app's `@DistributedCron` / `@DistributedInterval` rows wait at boot for the app's own runner
 * (SundialWorkerModule) to announce its handlers, before they are written anyway with a warning: a
 * worker with `autoStart: false` started late or never, or a runner whose start failed.
 */
export const OWN_RUNNER_WAIT_MS = 10_000;

/** How the wait for the runner's announcement ended. */
export type AnnouncementWait = 'announced' | 'late' | 'closed';

/**
 * Where SundialModule's `@DistributedCron` registrar meets this app's own runner (SundialWorkerModule) at
 * boot (docs/spec.md §5.1, a rolling deploy): the registrar writes its rows only once the runner has
 * announced its handlers (`P:handlers`). Written before, a slot due in between went to an older build's
 * worker that knew of no worker with the handler, and failed `unknown-handler`.
 *
 * Nest awaits the modules' `onApplicationBootstrap` hooks one module after another, and the registrar's
 * (SundialModule, global: first) may come before the worker's: awaiting the announcement there would hold
 * up the very start that makes it. So a registrar whose runner has not started hands its boot pass over
 * (`hold`) and the worker's start awaits it once the runner announced (`startWith`): the app's init still
 * ends with the rows written, and a row refusal still stops it. An app without the worker module writes
 * at once, as before.
 */
export class OwnRunner {
  private announcement: Promise<void> | undefined;
  private starting = false;
  private handed: Promise<void> = Promise.resolve();
  private close: () => void = () => undefined;
  private readonly closed = new Promise<'closed'>((resolve) => (this.close = () => resolve('closed')));
  private markStarted: () => void = () => undefined;
  /** The worker's whole start succeeded (its checks too): the announcement alone is not enough. */
  private readonly started = new Promise<void>((resolve) => (this.markStarted = resolve));

  /** SundialWorkerModule's runner will serve this app's handlers; `announced` resolves at their announcement. */
  expect(announced: Promise<void>): void {
    this.announcement = announced;
  }

  /**
   * Resolves when the runner announced and the worker's start ended well, `waitMs` went by, or the app
   * closed (`closing`) or the start failed first: a start that fails after the announcement (a configKey
   * connection to another database) writes no row and announces no declaration set.
   */
  async announced(waitMs = OWN_RUNNER_WAIT_MS): Promise<AnnouncementWait> {
    if (!this.announcement) return 'announced';
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(resolve, waitMs, 'late')));
    try {
      const ready = Promise.all([this.announcement, this.started]).then(() => 'announced' as const);
      return await Promise.race([ready, late, this.closed]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * The registrar's boot pass: returned to be awaited when the worker's start is under way (or there is
   * no worker); otherwise handed to that start and a settled promise returned. `unawaited` hears a
   * failure nobody awaited yet (the worker not started: `autoStart: false`).
   */
  hold(boot: Promise<void>, unawaited: (error: unknown) => void): Promise<void> {
    if (!this.announcement || this.starting) return boot;
    this.handed = boot;
    boot.catch((error: unknown) => {
      if (!this.starting) unawaited(error);
    });
    return Promise.resolve();
  }

  /**
   * SundialWorker's start: the runner's and its checks, then the registrar's boot pass handed to it (its
   * failure is the start's). A start that fails ends the pass's wait, as a close does: nothing is written.
   */
  async startWith(startRunner: () => Promise<void>): Promise<void> {
    this.starting = true;
    try {
      await startRunner();
    } catch (error) {
      this.close();
      throw error;
    }
    this.markStarted();
    await this.handed;
  }

  /** The app closes: a wait for the announcement ends (the pass then writes nothing). */
  closing(): void {
    this.close();
  }
}

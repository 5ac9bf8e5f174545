import { type FSWatcher, watch } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { isSundialError, type SundialLogger, type TimersApi, type SpecLimits } from '@sundial/core';
import { applySchedules } from './schedules-apply';
import { type FileRow, readSchedules, type SchedulesProblem } from './schedules-file';

/** What a pass found, for the gauges of docs/spec.md §6.1 (`SchedulesFileMetrics`). */
export interface SchedulesStatus {
  /** problems reported by the pass: refused rows, or 1 for a file refused or unreadable as a whole */
  problems: number;
  /** valid rows of the text applied, when the pass applied one */
  rows: number;
  /** epoch ms of the apply; absent when the pass applied nothing (the file refused or unreadable) */
  appliedAt?: number;
}

export interface SchedulesFollowerOptions {
  /** SUNDIAL_SCHEDULES_FILE */
  path: string;
  timers: TimersApi;
  limits: SpecLimits;
  logger: SundialLogger;
  /** how often the file is read again besides its directory's watch events (default 250 ms) */
  checkMs?: number;
  /**
   * How often a text applied with rows refused for a key another timer holds (`duplicate-key`) is applied
   * again, so that a row is scheduled once its key is free (default 5000 ms)
   */
  retryRefusedMs?: number;
  /** told after each pass that reached a verdict */
  onStatus?: (status: SchedulesStatus) => void;
}

const DEFAULT_CHECK_MS = 250;
const DEFAULT_RETRY_REFUSED_MS = 5_000;
/**
 * Editors write a file in several steps (an edit in place truncates it, then writes): a pass waits this
 * long after a watch event, and a text read for the first time is read again at least this much later
 * and applied only if it stayed.
 */
const SETTLE_MS = 20;
/**
 * A text is applied only once the file has not changed for this long (its mtime, or the time the
 * follower first read the text): a writer that writes in place in several writes with pauses between
 * them (a script, a slow copy) left a part of the file for longer than SETTLE_MS, and that part — the
 * rows before the pause — was applied: the later rows' timers cancelled and made anew a moment later
 * (their runs, pauses and finished one-shots lost). Within the spec's second: a ConfigMap swap or an
 * edit is applied ~300 ms after it.
 */
const QUIET_MS = 300;

/**
 * Keeps the timers of a schedules file (docs/spec.md §5.1) in step with it while the scheduler runs: a
 * row added is scheduled, a row changed is replaced, a row removed has its timer cancelled, within a
 * second of the edit and without a restart. It watches the file's directory (an edit in place, a
 * rename) and also reads the file every `checkMs`: a Kubernetes ConfigMap is updated by swapping a
 * symlink, which a watch does not always report. A text is applied once whole (`settled`), by
 * `applySchedules`. A refused row (or file, or a file that cannot be read) is logged once, with its
 * reason, field and fix, and changes nothing; the valid rows still apply. It writes only rows marked as
 * its own and never touches a timer created through the API. After a global `cancelAll()` (`reset`)
 * it schedules its rows again.
 */
export class SchedulesFollower {
  private readonly checkMs: number;
  /** the text last applied in full (or refused as a whole); a pass over the same text does nothing */
  private applied: string | undefined;
  /** the text not yet applied that the last read found, and when it was first read */
  private candidate: { text: string; since: number } | undefined;
  /**
   * How many resets this follower heard: an apply under way when one came (its listing made before the
   * cancelAll) does not mark its text applied, so the pass the reset asks for writes the rows again.
   */
  private resets = 0;
  /** the rows of the text last applied in full: written again after a reset while the file is not applied */
  private lastApplied: FileRow[] | undefined;
  /** a reset came since `lastApplied` was last written in full */
  private restoreOwed = false;
  /**
   * When the text applied is applied again: some of its rows were refused for a key a timer not created
   * from the file holds, and the refusal's fix is to cancel that timer — the row then waited for the
   * file's next edit. One listing (and a read per such row) each `retryRefusedMs`.
   */
  private retryAt: number | undefined;
  /** what the last pass reported, so a problem that stays is logged once */
  private reported = new Set<string>();
  private pending = false;
  private running: Promise<void> | undefined;
  private watcher: FSWatcher | undefined;
  private ticker: NodeJS.Timeout | undefined;
  private settle: NodeJS.Timeout | undefined;
  private stopFollowingReset = (): void => undefined;
  private stopped = false;
  /** ends a pass's wait for the file to settle at `stop()` */
  private readonly stopping = new AbortController();

  constructor(private readonly options: SchedulesFollowerOptions) {
    this.checkMs = options.checkMs ?? DEFAULT_CHECK_MS;
  }

  /** Applies the file once, then follows it. */
  async start(): Promise<void> {
    this.stopFollowingReset = this.options.timers.on('reset', () => {
      this.resets++;
      this.restoreOwed = true;
      this.applied = undefined;
      void this.check();
    });
    await this.check();
    this.watcher = this.watchDirectory();
    this.ticker = setInterval(() => void this.check(), this.checkMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping.abort();
    this.stopFollowingReset();
    this.watcher?.close();
    clearInterval(this.ticker);
    clearTimeout(this.settle);
    await this.running;
  }

  /** One pass now, or right after the one under way: passes never overlap. */
  check(): Promise<void> {
    this.pending = true;
    this.running ??= this.drain().finally(() => (this.running = undefined));
    return this.running;
  }

  private async drain(): Promise<void> {
    while (this.pending && !this.stopped) {
      this.pending = false;
      await this.pass();
    }
  }

  private watchDirectory(): FSWatcher | undefined {
    try {
      const watcher = watch(dirname(this.options.path), { persistent: false }, () => {
        clearTimeout(this.settle);
        this.settle = setTimeout(() => void this.check(), SETTLE_MS);
      });
      // A directory that goes away (an unmounted volume) leaves the periodic read to follow the file.
      watcher.on('error', () => watcher.close());
      return watcher;
    } catch {
      return undefined;
    }
  }

  private async pass(): Promise<void> {
    let text: string;
    let mtimeMs: number;
    try {
      text = await readFile(this.options.path, 'utf8');
      // after the read: a write since then makes the file look busy, never settled
      mtimeMs = (await stat(this.options.path)).mtimeMs;
    } catch (error) {
      // Kept as they are: a file missing for a moment (a volume remounted, a delete then a write) must
      // not cancel every row. `timers: []` removes them.
      this.applied = undefined;
      this.report([
        {
          reason: 'invalid',
          field: 'SUNDIAL_SCHEDULES_FILE',
          message: `The schedules file cannot be read: ${(error as Error).message}. Its timers stay as they are.`,
          fix: 'Mount the file at SUNDIAL_SCHEDULES_FILE, or unset it to follow no file.',
        },
      ]);
      await this.restore();
      return;
    }
    const retry = text === this.applied;
    if (
      (retry && !(this.retryAt !== undefined && Date.now() >= this.retryAt)) ||
      !(await this.settled(text, mtimeMs))
    )
      return;
    const read = readSchedules(text, this.options.limits);
    if (!read.rows) {
      this.report(read.problems);
      this.retryAt = undefined;
      // refused as a whole: nothing to apply until it changes (or a reset)
      if (await this.restore()) this.applied = text;
      return;
    }
    const started = Date.now();
    const resets = this.resets;
    try {
      const done = await applySchedules(this.options.timers, read.rows, read.untouched, this.options.logger);
      // a reset during the apply cancelled rows it listed as written: the next pass (pending) writes them
      if (resets === this.resets) {
        this.applied = text;
        this.restoreOwed = false;
      }
      this.lastApplied = read.rows;
      const held = done.problems.some((problem) => problem.reason === 'duplicate-key');
      this.retryAt = held
        ? Date.now() + (this.options.retryRefusedMs ?? DEFAULT_RETRY_REFUSED_MS)
        : undefined;
      const problems = [...read.problems, ...done.problems];
      // a retry that changed nothing (the key still held) is not a line every retryRefusedMs
      if (!retry || done.written + done.removed > 0)
        this.options.logger.info('schedules file applied', {
          file: this.options.path,
          rows: read.rows.length - done.problems.length,
          written: done.written,
          removed: done.removed,
          problems: problems.length,
          durationMs: Date.now() - started,
        });
      this.report(problems, { rows: read.rows.length - done.problems.length, appliedAt: Date.now() });
    } catch (error) {
      // Redis is unreachable (or refused something unexpected): the next check tries the text again.
      this.report([
        ...read.problems,
        {
          reason: isSundialError(error) ? error.reason : 'unavailable',
          message: `The schedules file could not be applied: ${(error as Error).message}`,
          fix: 'It is applied again at the next check; see the scheduler /health/ready for Redis.',
        },
      ]);
    }
  }

  /**
   * After a reset while the file is not applied (refused as a whole, or unreadable), whose timers stay as
   * they are "until the file is back": the reset cancelled them, so the rows of the text last applied are
   * written again — none removed (another replica may have applied a newer text). Before, every row of the
   * file stayed gone until the file was fixed. Resolves whether nothing is owed any more (false: Redis
   * unavailable, or another reset came; the next pass tries again).
   */
  private async restore(): Promise<boolean> {
    const rows = this.lastApplied;
    if (!this.restoreOwed || !rows) return true;
    const resets = this.resets;
    try {
      const done = await applySchedules(this.options.timers, rows, new Set(), this.options.logger, {
        remove: false,
      });
      this.options.logger.info('schedules file: the rows last applied written again after a reset', {
        file: this.options.path,
        rows: rows.length,
        written: done.written,
      });
    } catch {
      return false; // Redis unavailable: the next pass tries again
    }
    if (resets !== this.resets) return false;
    this.restoreOwed = false;
    return true;
  }

  /**
   * Whether `text` is whole: read again at least SETTLE_MS after it was first read, and the file unchanged
   * for QUIET_MS. Not yet: waits until it may be, and has the drain read the file again. A file read
   * mid-edit (empty, or the rows before a writer's pause) is thus neither applied nor reported.
   */
  private async settled(text: string, mtimeMs: number): Promise<boolean> {
    const now = Date.now();
    if (this.candidate?.text !== text) this.candidate = { text, since: now };
    const seenFor = now - this.candidate.since;
    const quietFor = Math.max(seenFor, now - mtimeMs);
    if (seenFor >= SETTLE_MS && quietFor >= QUIET_MS) return true;
    this.pending = true;
    const wait = Math.max(SETTLE_MS - seenFor, QUIET_MS - quietFor);
    await sleep(wait, undefined, { signal: this.stopping.signal }).catch(() => undefined);
    return false;
  }

  /** Logs each problem not already reported by the previous pass; tells `onStatus`. */
  private report(problems: SchedulesProblem[], applied?: { rows: number; appliedAt: number }): void {
    this.options.onStatus?.({ problems: problems.length, rows: applied?.rows ?? 0, ...applied });
    const now = new Set<string>();
    for (const problem of problems) {
      const signature = JSON.stringify(problem);
      now.add(signature);
      if (this.reported.has(signature)) continue;
      const { message, ...fields } = problem;
      this.options.logger.warn(message, { file: this.options.path, ...fields });
    }
    this.reported = now;
  }
}

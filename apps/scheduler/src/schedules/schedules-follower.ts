import { type FSWatcher, watch } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ensureOwnedRow,
  isSundialError,
  removeOwnedRows,
  type SundialLogger,
  type TimersApi,
  type SpecLimits,
} from '@sundial/core';
import { type FileRow, readSchedules, type SchedulesProblem, schedulesOwner } from './schedules-file';

export interface SchedulesFollowerOptions {
  /** SUNDIAL_SCHEDULES_FILE */
  path: string;
  timers: TimersApi;
  limits: SpecLimits;
  logger: SundialLogger;
  /** how often the file is read again besides its directory's watch events (default 250 ms) */
  checkMs?: number;
}

const DEFAULT_CHECK_MS = 250;
/**
 * Editors write a file in several steps (an edit in place truncates it, then writes): a pass waits this
 * long after a watch event, and a text read for the first time is read again this much later and
 * applied only if it stayed.
 */
const SETTLE_MS = 20;

/**
 * Keeps the timers of a schedules file (docs/spec.md §5.4) in step with it while the scheduler runs: a
 * row added is scheduled, a row changed is replaced, a row removed has its timer cancelled, within a
 * second of the edit and without a restart. It watches the file's directory (an edit in place, a
 * rename) and also reads the file every `checkMs`: a Kubernetes ConfigMap is updated by swapping a
 * symlink, which a watch does not always report. A refused row (or file) is logged once, with its
 * reason, field and fix, and changes nothing; the valid rows still apply. It writes only rows marked as
 * its own and never touches a timer created through the API. After a global `cancelAll()` (`reset`)
 * it schedules its rows again.
 */
export class SchedulesFollower {
  private readonly checkMs: number;
  /** the text last applied in full; a pass over the same text does nothing */
  private applied: string | undefined;
  /** the text the last read found: another text is applied only once a second read finds it too */
  private lastRead: string | undefined;
  /** what the last pass reported, so a problem that stays is logged once */
  private reported = new Set<string>();
  private pending = false;
  private running: Promise<void> | undefined;
  private watcher: FSWatcher | undefined;
  private ticker: NodeJS.Timeout | undefined;
  private settle: NodeJS.Timeout | undefined;
  private stopFollowingReset = (): void => undefined;
  private stopped = false;

  constructor(private readonly options: SchedulesFollowerOptions) {
    this.checkMs = options.checkMs ?? DEFAULT_CHECK_MS;
  }

  /** Applies the file once, then follows it. */
  async start(): Promise<void> {
    this.stopFollowingReset = this.options.timers.on('reset', () => {
      this.applied = undefined;
      void this.check();
    });
    await this.check();
    this.watcher = this.watchDirectory();
    this.ticker = setInterval(() => void this.check(), this.checkMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
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
    try {
      text = await readFile(this.options.path, 'utf8');
    } catch (error) {
      this.applied = undefined;
      return this.report([
        {
          reason: 'invalid',
          field: 'SUNDIAL_SCHEDULES_FILE',
          message: `The schedules file cannot be read: ${(error as Error).message}. Its timers stay as they are.`,
          fix: 'Mount the file at SUNDIAL_SCHEDULES_FILE, or unset it to follow no file.',
        },
      ]);
    }
    if (text !== this.lastRead && text !== this.applied) {
      // Read mid-edit, maybe: the periodic read does not wait for the watch's settle, and a write in
      // place has the file empty (or part-written) for a moment — seen under load, where the empty file
      // was reported and the next pass reported its rows' problems again. Read again once it settled.
      this.lastRead = text;
      this.pending = true;
      await sleep(SETTLE_MS);
      return;
    }
    this.lastRead = text;
    if (text === this.applied) return;
    const read = readSchedules(text, this.options.limits);
    try {
      const problems = read.rows ? await this.apply(read.rows, read.untouched) : [];
      this.applied = text;
      this.report([...read.problems, ...problems]);
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

  /** Writes the rows that differ, removes the owned rows no longer in the file; returns what was refused. */
  private async apply(rows: FileRow[], untouched: ReadonlySet<string>): Promise<SchedulesProblem[]> {
    const { timers, logger } = this.options;
    const problems: SchedulesProblem[] = [];
    const keep = new Set(untouched);
    for (const { row, spec } of rows) {
      keep.add(spec.key);
      let outcome: Awaited<ReturnType<typeof ensureOwnedRow>>;
      try {
        outcome = await ensureOwnedRow(timers, spec, schedulesOwner);
      } catch (error) {
        // A row the store refuses (e.g. a cron without a next slot): reported like an invalid one.
        if (!isSundialError(error) || error.reason === 'unavailable') throw error;
        problems.push({ row, key: spec.key, ...error.toJSON() });
        continue;
      }
      if (outcome === 'written') logger.info('schedules file: row applied', { key: spec.key });
      if (outcome === 'foreign') {
        problems.push({
          reason: 'duplicate-key',
          field: 'key',
          row,
          key: spec.key,
          message: `The key ${spec.key} holds a timer not created from the schedules file (through the API).`,
          fix: `Give the row another key, or cancel ${spec.key} if it is a leftover.`,
        });
      }
    }
    for (const key of await removeOwnedRows(timers, schedulesOwner, keep)) {
      logger.info('schedules file: row removed, its timer cancelled', { key });
    }
    return problems;
  }

  /** Logs each problem not already reported by the previous pass. */
  private report(problems: SchedulesProblem[]): void {
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

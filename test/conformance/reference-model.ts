/**
 * The reference model of model.test.ts: what docs/spec.md §3 says a backend holds after each operation of
 * a random sequence (one-shots and intervals with synchronous handlers) — its live entries, tombstones and
 * runs.
 */
import { nextGridSlot, type Timer } from '@sundial/core';

export const KEYS = ['a', 'b', 'g:a', 'g:b'] as const;
export type Key = (typeof KEYS)[number];

export type Op =
  | {
      op: 'schedule';
      key: Key;
      delay?: number;
      every?: number;
      fail: boolean;
      ifExists: 'error' | 'replace' | 'keep';
    }
  | { op: 'reschedule'; key: Key; delay: number }
  | { op: 'cancel' | 'pause' | 'resume'; key: Key }
  | { op: 'cancelAll'; scope?: 'g:' }
  | { op: 'advance'; ms: number };

export interface ModelEntry {
  id: string;
  every?: number;
  fail: boolean;
  due: number;
  anchor: number;
  paused: boolean;
  runCount: number;
  lastStarted: number | null;
}

export class Model {
  /** runs so far, and how many of them threw */
  runs = 0;
  failures = 0;
  readonly ids = new Set<string>();
  /** the backend's runs the model has accounted for */
  readonly taken = new Set<object>();
  readonly live = new Map<string, ModelEntry>();
  /** key → id of its cancelled timer (tombstones outlive every test sequence) */
  readonly tombstones = new Map<string, string>();

  /** What schedule must answer: a refusal, the id it keeps, or a fresh id. */
  expectSchedule(o: Extract<Op, { op: 'schedule' }>): 'duplicate-key' | { kept: string } | 'fresh' {
    const live = this.live.get(o.key);
    if (live && o.ifExists === 'error') return 'duplicate-key';
    const kept = o.ifExists === 'keep' ? (live?.id ?? this.tombstones.get(o.key)) : undefined;
    return kept ? { kept } : 'fresh';
  }

  created(key: string, o: Extract<Op, { op: 'schedule' }>, timer: Timer): void {
    this.ids.add(timer.id);
    this.tombstones.delete(key);
    this.live.set(key, {
      id: timer.id,
      every: o.every,
      fail: o.fail,
      due: timer.dueAt,
      anchor: timer.scheduledAt,
      paused: false,
      runCount: 0,
      lastStarted: null,
    });
  }

  cancel(key: string): boolean {
    const entry = this.live.get(key);
    if (!entry) return false;
    this.live.delete(key);
    this.tombstones.set(key, entry.id);
    return true;
  }

  /** The live entry that runs next, if any. */
  next(): [string, ModelEntry] | undefined {
    let first: [string, ModelEntry] | undefined;
    for (const pair of this.live) if (!pair[1].paused && (!first || pair[1].due < first[1].due)) first = pair;
    return first;
  }

  ran(key: string, entry: ModelEntry, started: number, settled: number): void {
    this.runs += 1;
    entry.runCount += 1;
    entry.lastStarted = started;
    if (entry.fail) this.failures += 1;
    if (entry.every === undefined || entry.fail) this.live.delete(key);
    else entry.due = nextGridSlot(entry.anchor, entry.every, settled);
  }
}

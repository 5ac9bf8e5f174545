import type { Clock } from '../clock';
import { asTheBatchLeftThem } from '../batch-answers';
import { liveKeyInBatch, normalizeBatch } from '../batch-refusals';
import { refusals } from '../refusals';
import { firstDue } from '../schedule';
import { firstSlot } from '../slot-policy';
import type { NormalizedSpec, Timer, TimerHandler, TimerSpec } from '../types';
import type { ValidationLimits } from '../validation';
import { engineSpec } from './argument-checks';
import { createEntry, toTimer } from './entry';
import type { EntryStore } from './entry-store';
import type { FirePath } from './fire-path';
import type { SundialLogger } from '../logger';
import { describeWhen, whenOfSpec, whenOfTimer } from './when';

export interface PlacementDeps {
  clock: Clock;
  store: EntryStore;
  firePath: FirePath;
  logger: SundialLogger;
  handlers: Readonly<Record<string, TimerHandler>>;
  limits: Partial<ValidationLimits>;
}

/**
 * What a spec does to its key (docs/spec.md §3.1 from step 2): validated against the limits and the
 * handlers this engine knows, then created, kept or replacing the live timer; ids are issued here.
 */
export class Placement {
  private lastId = 0;

  constructor(private readonly deps: PlacementDeps) {}

  /**
   * `ownedRow`: a declarative source's write, which may carry `meta.sundialOwner` (WriteOptions). `taken`:
   * the key is another request's, answered (`WriteOptions.unlessAnswered`): a valid spec is refused as a
   * live key's, unchanged.
   */
  schedule(spec: TimerSpec<unknown>, ownedRow = false, taken = false): Timer {
    const normalized = this.normalize(spec, ownedRow);
    if (taken) throw refusals.duplicateKey(normalized.key);
    return this.place(normalized);
  }

  /** All or nothing: every spec is checked before the first one is placed. */
  scheduleMany(specs: TimerSpec<unknown>[], ownedRow = false): Timer[] {
    const normalized = normalizeBatch(specs, (spec) => this.normalize(spec, ownedRow));
    const live = normalized.find(
      (spec) => spec.ifExists === 'error' && this.deps.store.get(spec.key)?.outcome === null,
    );
    if (live) throw liveKeyInBatch(normalized, live.key);
    return asTheBatchLeftThem(normalized.map((spec) => this.place(spec)));
  }

  private normalize(spec: TimerSpec<unknown>, ownedRow: boolean): NormalizedSpec {
    // before the key is looked up, and in a batch before anything is placed, named at its spec
    return engineSpec(this.deps, spec, ownedRow);
  }

  /** docs/spec.md §3.1 step 3 on. */
  private place(spec: NormalizedSpec): Timer {
    const { store, firePath, clock } = this.deps;
    const existing = store.get(spec.key);
    const live = existing && !existing.outcome ? existing : undefined;
    if (live && spec.ifExists === 'error') throw refusals.duplicateKey(spec.key);
    if (spec.ifExists === 'keep') {
      const recorded = live ? toTimer(live) : store.tombstone(spec.key, clock.now());
      if (recorded) return this.keep(recorded, spec);
    }
    // A finished row kept by removeOnComplete: false does not hold its key: the new timer takes it.
    const now = clock.now();
    // Found before anything changes: an endAt before the first slot refuses the spec.
    const slot = spec.kind === 'once' ? undefined : firstSlot(spec, now);
    if (live) firePath.cancel(live, 'replaced');
    else if (existing) store.remove(existing);
    const entry = createEntry(String(++this.lastId), spec, now);
    store.add(entry);
    if (slot === undefined) firePath.arm(entry, firstDue(spec, now));
    else firePath.armSlot(entry, slot);
    firePath.emit('scheduled', entry, { due: entry.dueAt });
    return toTimer(entry);
  }

  /** The first call names the time: a later one gets the recorded timer, and a warning if it asked for another. */
  private keep(recorded: Timer, spec: NormalizedSpec): Timer {
    const requested = describeWhen(whenOfSpec(spec));
    const kept = describeWhen(whenOfTimer(recorded));
    if (requested !== kept) {
      this.deps.logger.warn('ifExists keep: the key already exists, so the requested time is ignored', {
        key: recorded.key,
        id: recorded.id,
        version: recorded.version,
        status: recorded.status,
        recorded: kept,
        requested,
      });
    }
    return recorded;
  }
}

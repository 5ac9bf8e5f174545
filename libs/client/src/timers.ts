import type {
  BackfillRange,
  BackfillResult,
  CancelOutcome,
  CheckedSpec,
  JsonInput,
  ListOptions,
  ListResult,
  RescheduleWhen,
  TimerSpec,
  Timer,
  TimerEventName,
  TimerListener,
  TimersBackend,
  WriteOptions,
  DescribeOptions,
  HistoryOptions,
  LedgerEntry,
  NextOptions,
  NextTime,
  Preview,
  TimerDescription,
} from '@sundial/core';

/**
 * The injectable timers API (docs/spec.md §5.1). Nest resolves it to the backend chosen in
 * `SundialModule.forRoot`: `RedisTimers` or the in-memory engine — both implement `TimersBackend`.
 */
export abstract class Timers implements TimersBackend {
  /** `P`, the payload's type, must be JSON (`JsonCompatible`): an interface compiles, a Date or a function does not. */
  abstract schedule<P = JsonInput>(spec: CheckedSpec<P>, options?: WriteOptions): Promise<Timer>;
  /** A batch of JSON payloads of different shapes (`{ id: 1 }` beside `'b'`), or of one type `P` (an interface). */
  abstract scheduleMany(specs: TimerSpec[], options?: WriteOptions): Promise<Timer[]>;
  abstract scheduleMany<P>(specs: CheckedSpec<P>[], options?: WriteOptions): Promise<Timer[]>;
  abstract cancel(key: string, options?: WriteOptions): Promise<boolean>;
  /**
   * The same write as `cancel`, told three ways (docs/spec.md §3.4): `'cancelled'` a live timer, `'completed'`
   * or `'failed'` the kept row of a timer that ended so, removed, `null` no row under the key.
   */
  abstract cancelOutcome(key: string, options?: WriteOptions): Promise<CancelOutcome>;
  abstract cancelAll(scope?: string, options?: WriteOptions): Promise<number>;
  abstract reschedule(key: string, when: RescheduleWhen, options?: WriteOptions): Promise<Timer>;
  abstract pause(key: string, options?: WriteOptions): Promise<Timer>;
  abstract resume(key: string, options?: WriteOptions): Promise<Timer>;
  abstract trigger(key: string, options?: WriteOptions): Promise<Timer>;
  abstract backfill(key: string, range: BackfillRange, options?: WriteOptions): Promise<BackfillResult>;
  abstract get(key: string): Promise<Timer | null>;
  abstract list(options?: ListOptions): Promise<ListResult>;
  abstract check(id: string): Promise<boolean>;
  abstract snapshot(): Promise<string[]>;
  abstract history(key: string, options?: HistoryOptions): Promise<LedgerEntry[]>;
  abstract next(key: string, options?: NextOptions): Promise<NextTime[]>;
  abstract preview<P = JsonInput>(spec: CheckedSpec<P>, options?: NextOptions): Promise<Preview>;
  abstract describe(key: string, options?: DescribeOptions): Promise<TimerDescription>;
  abstract on(event: TimerEventName, listener: TimerListener): () => void;
  abstract dispose(): Promise<void>;
}

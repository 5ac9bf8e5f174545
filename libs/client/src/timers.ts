import type {
  ListOptions,
  ListResult,
  RescheduleWhen,
  Timer,
  TimerEventName,
  TimerListener,
  TimerSpec,
  TimersApi,
} from '@sundial/core';

/**
 * The injectable timers API (docs/spec.md §5.1). Nest resolves it to the backend chosen in
 * `SundialModule.forRoot`: `RedisTimers` or the in-memory engine — both implement `TimersApi`.
 */
export abstract class Timers implements TimersApi {
  abstract schedule(spec: TimerSpec): Promise<Timer>;
  abstract scheduleMany(specs: TimerSpec[]): Promise<Timer[]>;
  abstract cancel(key: string): Promise<boolean>;
  abstract cancelAll(scope?: string): Promise<number>;
  abstract reschedule(key: string, when: RescheduleWhen): Promise<Timer>;
  abstract pause(key: string): Promise<Timer>;
  abstract resume(key: string): Promise<Timer>;
  abstract trigger(key: string): Promise<Timer>;
  abstract get(key: string): Promise<Timer | null>;
  abstract list(options?: ListOptions): Promise<ListResult>;
  abstract check(id: string): Promise<boolean>;
  abstract snapshot(): Promise<string[]>;
  abstract on(event: TimerEventName, listener: TimerListener): () => void;
  abstract dispose(): Promise<void>;
}

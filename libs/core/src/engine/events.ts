import { SundialError } from '../errors';
import { describeFailure } from '../failure';
import { showValue } from '../show-value';
import type { TimerEvent, TimerEventName, TimerListener } from '../types';
import type { SundialLogger } from '../logger';

export const EVENT_NAMES: readonly TimerEventName[] = [
  'scheduled',
  'running',
  'completed',
  'failed',
  'requeued',
  'cancelled',
  'stale',
  'skipped',
  'paused',
  'reset',
  'disposed',
];

/** Refuses an unknown event name or a listener that is not a function (every backend's on()). */
export function checkListener(name: TimerEventName, listener: TimerListener): void {
  if (!EVENT_NAMES.includes(name)) {
    throw new SundialError({
      reason: 'invalid',
      field: 'event',
      message: `event ${showValue(name)} is not a timer event`,
      fix: `Listen to one of ${EVENT_NAMES.join(', ')}.`,
    });
  }
  if (typeof listener !== 'function') {
    throw new SundialError({
      reason: 'invalid',
      field: 'listener',
      message: `the listener for ${name} must be a function, got ${showValue(listener)}`,
      fix: 'Pass a function that takes the event, such as (event) => console.log(event).',
    });
  }
}

/** The engine's listeners. A listener that throws or rejects is logged and never reaches the engine. */
export class EventHub {
  private readonly listeners = new Map<TimerEventName, Set<TimerListener>>();

  constructor(private readonly logger: SundialLogger) {}

  on(name: TimerEventName, listener: TimerListener): () => void {
    checkListener(name, listener);
    const set = this.listeners.get(name) ?? new Set();
    this.listeners.set(name, set);
    // A wrapper per subscription, so subscribing the same function twice needs two unsubscribes.
    const subscription: TimerListener = (event) => listener(event);
    set.add(subscription);
    return () => void set.delete(subscription);
  }

  emit(event: TimerEvent): void {
    for (const listener of [...(this.listeners.get(event.type) ?? [])]) {
      try {
        const result: unknown = listener(event);
        if (result instanceof Promise) result.catch((error: unknown) => this.report(event, error));
      } catch (error) {
        this.report(event, error);
      }
    }
  }

  clear(): void {
    this.listeners.clear();
  }

  private report(event: TimerEvent, error: unknown): void {
    this.logger.error(`a ${event.type} listener threw; the engine goes on`, {
      key: event.key,
      id: event.id,
      version: event.version,
      error: describeFailure(error).message,
    });
  }
}

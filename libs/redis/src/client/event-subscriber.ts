import type { TimerEvent, TimerEventName, TimerListener } from '@sundial/core';
import type { SundialLogger } from '@sundial/core';
import type { RedisClient } from '../infra/connection';
import { closeRedis } from '../infra/connection';
import { Subscription } from '../infra/subscription';

/**
 * Cluster-wide events: one subscriber connection on `P:events`, opened at the first listener.
 * A listener that throws is logged and never stops the others.
 */
export class EventSubscriber {
  private readonly listeners = new Map<TimerEventName, Set<TimerListener>>();
  private connection: RedisClient | undefined;
  private subscription: Subscription | undefined;
  /** Settles once the first SUBSCRIBE has its answer; callers await it so their own events are not missed. */
  private subscribed: Promise<void> = Promise.resolve();
  /** `subscribed` has settled: a call need not wait for it (nearly every call). */
  private settled = true;

  constructor(
    private readonly openConnection: () => RedisClient,
    private readonly channel: string,
    private readonly logger: Pick<SundialLogger, 'error' | 'warn' | 'info'>,
  ) {}

  on(type: TimerEventName, listener: TimerListener): () => void {
    if (!this.connection) this.subscribe();
    const set = this.listeners.get(type) ?? new Set<TimerListener>();
    this.listeners.set(type, set);
    // A wrapper gives every on() its own identity, so unsubscribing twice or a duplicate listener is safe.
    const entry: TimerListener = (event) => listener(event);
    set.add(entry);
    return () => set.delete(entry);
  }

  /** undefined when there is nothing to wait for. */
  ready(): Promise<void> | undefined {
    return this.settled ? undefined : this.subscribed;
  }

  /** Delivers an event to this process's listeners only (e.g. `disposed`). */
  emitLocal(event: TimerEvent): void {
    const report = (error: unknown) => {
      const message = error instanceof Error ? error.message : String(error);
      this.logger.error(`a ${event.type} listener threw: ${message}`, {
        key: event.key,
        id: event.id,
        version: event.version,
      });
    };
    for (const listener of this.listeners.get(event.type) ?? []) {
      try {
        const result: unknown = listener(event);
        // An async listener's rejection is caught too: left unhandled it would end the process.
        if (result instanceof Promise) result.catch(report);
      } catch (error) {
        report(error);
      }
    }
  }

  async close(): Promise<void> {
    this.listeners.clear();
    const connection = this.connection;
    this.connection = undefined;
    this.subscription?.close();
    if (connection) await closeRedis(connection);
  }

  private subscribe(): void {
    const connection = this.openConnection();
    this.connection = connection;
    connection.on('message', (_channel: string, message: string) =>
      this.emitLocal(JSON.parse(message) as TimerEvent),
    );
    // SUBSCRIBE again each time the connection is ready (infra/subscription.ts): a first listener that came
    // while Redis was unreachable (RedisTimers gives up a command after one failed reconnect) is subscribed
    // once Redis is back, instead of staying deaf for the client's life.
    this.subscription = new Subscription(connection, [this.channel], this.channel, this.logger);
    // A failed subscription must not fail every later call: events are best effort, calls are not.
    this.settled = false;
    this.subscribed = this.subscription.firstAttempt.then(() => {
      this.settled = true;
    });
  }
}

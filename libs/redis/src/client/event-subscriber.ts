import type { TimerEvent, TimerEventName, TimerListener } from '@sundial/core';
import type { SundialLogger } from '@sundial/core';
import { checkListener } from '@sundial/core';
import type { RedisClient } from '../infra/connection';
import { closeRedis } from '../infra/connection';
import { Subscription } from '../infra/subscription';

/**
 * Where the events are published, and how to read the data markers (`P:epoch`, each partition's
 * `P:{pN}:epoch`; infra/data-marker.ts), each null where there is none.
 */
export interface EventSource {
  channel: string;
  markers: () => Promise<(string | null)[]>;
}

const RESET: Omit<TimerEvent, 'at'> = { type: 'reset', id: '', key: '', version: 0, kind: null, count: 0 };

/**
 * Cluster-wide events: one subscriber connection on `P:events`, opened at the first listener.
 * A listener that throws is logged and never stops the others. What was published while the connection
 * was away is not heard; of that, the `reset` that follows Redis losing its data matters (the
 * @DistributedCron and schedules-file rows are registered again on it), and it is published by one
 * process as it reconnects, often before the others are subscribed again: after each reconnect the data
 * markers are read, and one that changed since the last read tells this process's listeners a `reset`.
 */
export class EventSubscriber {
  private readonly listeners = new Map<TimerEventName, Set<TimerListener>>();
  private connection: RedisClient | undefined;
  private subscription: Subscription | undefined;
  /** Settles once the first SUBSCRIBE has its answer; callers await it so their own events are not missed. */
  private subscribed: Promise<void> = Promise.resolve();
  /** `subscribed` has settled: a call need not wait for it (nearly every call). */
  private settled = true;
  /** the data markers as last read: at the first subscription, then after each reconnect */
  private markers: (string | null)[] = [];

  constructor(
    private readonly openConnection: () => RedisClient,
    private readonly source: EventSource,
    private readonly logger: Pick<SundialLogger, 'error' | 'warn' | 'info'>,
  ) {}

  on(type: TimerEventName, listener: TimerListener): () => void {
    // Refused before the subscriber connection opens: a bad name or listener changes nothing.
    checkListener(type, listener);
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
    const { channel } = this.source;
    const resubscribed = () => void this.readMarkers();
    this.subscription = new Subscription(connection, [channel], channel, this.logger, resubscribed);
    // A failed subscription must not fail every later call: events are best effort, calls are not.
    this.settled = false;
    this.subscribed = this.subscription.firstAttempt.then(() => {
      this.settled = true;
      void this.readMarkers();
    });
  }

  /**
   * A marker other than the one read before (`P:epoch`, or a partition's on a Redis Cluster's lost shard):
   * Redis lost data while this connection was away, and the `reset` published then may not have been
   * heard. Heard or not, the listeners get one (a second pass of a registrar writes nothing). None yet
   * (or none before: a release before the partitions' markers): the process that writes it publishes the
   * reset of a loss, which this connection, subscribed again, hears.
   */
  private async readMarkers(): Promise<void> {
    const found = await this.source.markers().catch(() => []);
    const before = this.markers;
    if (found.length > 0) this.markers = found;
    const replaced = found.some(
      (value, i) => value !== null && (before[i] ?? null) !== null && value !== before[i],
    );
    if (replaced) this.emitLocal({ ...RESET, at: Date.now() });
  }
}

import type { SundialLogger } from '@sundial/core';
import { type Counter, createNoopMeter, type Meter, type MeterProvider } from '@opentelemetry/api';
import { EXPORT_WARN_EVERY_MS } from './export-watch';

/** The SDK's self-observability counter a batch processor adds a dropped span to (error.type queue_full). */
const PROCESSED = 'otel.sdk.processor.span.processed';

const FIX =
  'Spans end faster than they are exported: check the collector keeps up, or raise OTEL_BSP_MAX_QUEUE_SIZE ' +
  '(default 2048) or lower OTEL_BSP_SCHEDULE_DELAY (default 5000 ms). Timers are not affected.';

/**
 * What an app says about spans its batch processor drops because its queue is full (docs/spec.md §6.4):
 * the SDK says so only at OTEL_LOG_LEVEL=debug. The first drop is a warn at once, then at most one a
 * minute while drops go on, each with the spans dropped since the last line (as ExportWatch).
 */
export class QueueWatch {
  private lastWarnAt: number | undefined;
  private dropped = 0;

  constructor(
    private readonly logger: SundialLogger,
    private readonly endpoint: string,
    private readonly now: () => number = Date.now,
  ) {}

  droppedForFullQueue(spans: number): void {
    this.dropped += spans;
    const at = this.now();
    if (this.lastWarnAt !== undefined && at - this.lastWarnAt < EXPORT_WARN_EVERY_MS) return;
    const since = this.lastWarnAt === undefined ? '' : ' since the last line';
    this.logger.warn(
      `Traces are lost: ${this.dropped} span${this.dropped === 1 ? '' : 's'} dropped${since} because the span queue ` +
        `for ${this.endpoint} was full`,
      { endpoint: this.endpoint, droppedSpans: this.dropped, fix: FIX },
    );
    this.lastWarnAt = at;
    this.dropped = 0;
  }

  /**
   * The `selfObsMeterProvider` to give the BatchSpanProcessor (an experimental SDK option): a no-op meter
   * but for the processed-spans counter, whose queue_full additions are told to this watch.
   */
  meterProvider(): MeterProvider {
    const noop = createNoopMeter();
    const processed: Counter = {
      add: (value, attributes) => {
        if (attributes?.['error.type'] === 'queue_full') this.droppedForFullQueue(value);
      },
    };
    const meter = Object.assign(Object.create(noop) as Meter, {
      createCounter: (name: string, options?: object): Counter =>
        name === PROCESSED ? processed : noop.createCounter(name, options),
    });
    return { getMeter: () => meter };
  }
}

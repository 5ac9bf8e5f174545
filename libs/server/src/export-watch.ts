import type { SundialLogger } from '@sundial/core';
import { type ExportResult, ExportResultCode } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';

/** At most one line a minute while exports keep failing (the first failure is said at once). */
export const EXPORT_WARN_EVERY_MS = 60_000;

const FIX =
  'Check that a collector listens at that endpoint (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, ' +
  'protocol OTEL_EXPORTER_OTLP_PROTOCOL) and is reachable from this process; OTEL_LOG_LEVEL=debug shows each export. ' +
  'Unset the OTEL_* variables to turn tracing off. Timers are not affected.';

/**
 * What an app says about its span exports (docs/spec.md §6.4): the SDK reports a failed export only at
 * OTEL_LOG_LEVEL=debug, so a collector that is down or misaddressed would lose every trace unsaid. The
 * first failure is a warn at once, then at most one a minute while they go on, each with the spans and
 * batches dropped since the last line; the first export that succeeds after them is an info.
 */
export class ExportWatch {
  private failing = false;
  private lastWarnAt = 0;
  private droppedSpans = 0;
  private droppedBatches = 0;

  constructor(
    private readonly logger: SundialLogger,
    private readonly endpoint: string,
    private readonly now: () => number = Date.now,
  ) {}

  failed(spans: number, error: Error | undefined): void {
    this.droppedSpans += spans;
    this.droppedBatches += 1;
    const at = this.now();
    if (this.failing && at - this.lastWarnAt < EXPORT_WARN_EVERY_MS) return;
    const since = this.failing ? ' since the last line' : '';
    this.logger.warn(
      `Traces are lost: ${counted(this.droppedSpans, 'span')} in ${counted(this.droppedBatches, 'batch')} could not be exported` +
        `${since} to ${this.endpoint}: ${error?.message ?? 'export failed'}`,
      {
        endpoint: this.endpoint,
        droppedSpans: this.droppedSpans,
        droppedBatches: this.droppedBatches,
        error: error?.message,
        fix: FIX,
      },
    );
    this.failing = true;
    this.lastWarnAt = at;
    this.droppedSpans = 0;
    this.droppedBatches = 0;
  }

  succeeded(): void {
    if (!this.failing) return;
    this.logger.info(`Traces are exported again to ${this.endpoint}`, {
      endpoint: this.endpoint,
      droppedSpans: this.droppedSpans,
      droppedBatches: this.droppedBatches,
    });
    this.failing = false;
    this.droppedSpans = 0;
    this.droppedBatches = 0;
  }
}

function counted(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : noun.endsWith('h') ? 'es' : 's'}`;
}

/** An exporter whose every export's result is told to its watch. */
export class WatchedExporter implements SpanExporter {
  constructor(
    private readonly exporter: SpanExporter,
    private readonly watch: ExportWatch,
  ) {}

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    this.exporter.export(spans, (result) => {
      if (result.code === ExportResultCode.SUCCESS) this.watch.succeeded();
      else this.watch.failed(spans.length, result.error);
      resultCallback(result);
    });
  }

  shutdown(): Promise<void> {
    return this.exporter.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.exporter.forceFlush?.() ?? Promise.resolve();
  }
}

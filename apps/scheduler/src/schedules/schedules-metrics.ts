import { Gauge, register, type Registry } from 'prom-client';
import type { SchedulesStatus } from './schedules-follower';

/**
 * The schedules file's gauges (docs/spec.md §6.1), fed by the follower after each pass: what an operator
 * running the file through GitOps checks after a sync — did this replica apply it, and is anything in
 * it refused. A metric already registered under the same name is reused (several apps in one process).
 */
export class SchedulesFileMetrics {
  private readonly problems: Gauge;
  private readonly rows: Gauge;
  private readonly appliedAt: Gauge;

  constructor(registry: Registry = register) {
    const gauge = (name: string, help: string): Gauge =>
      (registry.getSingleMetric(name) as Gauge | undefined) ??
      new Gauge({ name, help, registers: [registry] });
    this.problems = gauge(
      'sundial_schedules_file_problems',
      'Rows of SUNDIAL_SCHEDULES_FILE refused at the last pass, or 1 for a file refused or unreadable as a whole; 0 when it applies cleanly',
    );
    this.rows = gauge(
      'sundial_schedules_file_rows',
      'Valid rows of the SUNDIAL_SCHEDULES_FILE text last applied',
    );
    this.appliedAt = gauge(
      'sundial_schedules_file_applied_timestamp_seconds',
      'When this scheduler last applied a SUNDIAL_SCHEDULES_FILE text (Unix seconds); 0 before the first',
    );
  }

  /** The follower's `onStatus`. */
  readonly update = (status: SchedulesStatus): void => {
    this.problems.set(status.problems);
    if (status.appliedAt !== undefined) {
      this.rows.set(status.rows);
      this.appliedAt.set(status.appliedAt / 1000);
    }
  };
}

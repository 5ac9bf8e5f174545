import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RedisDescription } from './bench-redis';
import type { BenchSizes } from './config';
import type { ContenderName } from './contenders/contender';
import { ratio } from './stats';

/** A goal from the issue, checked against the measured values. */
export interface Target {
  text: string;
  met(sundial: number, bullmq: number | null): boolean;
}

export const atMost = (limit: number, unit: string): Target => ({
  text: `≤ ${formatNumber(limit)} ${unit}`.trim(),
  met: (sundial) => sundial <= limit,
});

export const none: Target = { text: '0', met: (sundial) => sundial === 0 };

export const timesBullmq = (factor: number): Target => ({
  text: `≥ ${factor}× BullMQ`,
  met: (sundial, bullmq) => bullmq !== null && sundial >= factor * bullmq,
});

/** For costs (latency, time, bytes): Sundial at most `factor` times what raw BullMQ measured in the same run. */
export const atMostTimesBullmq = (factor: number, aside = ''): Target => ({
  text: `≤ ${factor}× BullMQ${aside === '' ? '' : ` (${aside})`}`,
  met: (sundial, bullmq) => bullmq !== null && sundial <= factor * bullmq,
});

/** One line of the table. A null value was not measured (no raw-BullMQ equivalent, or that side failed). */
export interface Row {
  scenario: string;
  metric: string;
  sundial: number | null;
  bullmq: number | null;
  target: string;
  /** null: no target, or the target does not apply to this run's size (said in `note`) */
  met: boolean | null;
  note?: string;
}

export function row(
  scenario: string,
  metric: string,
  values: Partial<Record<ContenderName, number>>,
  target?: Target,
  note?: string,
): Row {
  const sundial = values.sundial ?? null;
  const bullmq = values.bullmq ?? null;
  const applies = target !== undefined && note === undefined && sundial !== null && Number.isFinite(sundial);
  return {
    scenario,
    metric,
    sundial,
    bullmq,
    target: target?.text ?? '',
    met: applies ? target.met(sundial, bullmq) : null,
    ...(note === undefined ? {} : { note }),
  };
}

/** The lateness distribution of one contender at one rate, as quantiles: enough to draw its CDF. */
export interface LatenessSeries {
  contender: ContenderName;
  rate: number;
  /** lateness in ms at each of QUANTILE_LEVELS */
  quantiles: number[];
}

export const QUANTILE_LEVELS = [...Array.from({ length: 100 }, (_, i) => i), 99.5, 99.9, 100];

export interface BenchReport {
  startedAt: string;
  durationMs: number;
  sizes: BenchSizes;
  machine: { node: string; cpus: number; platform: string };
  clock: string;
  redis: RedisDescription;
  rows: Row[];
  lateness: LatenessSeries[];
  /** per-scenario extras: counts of missing runs, command breakdowns, ... */
  details: Record<string, unknown>;
}

export function renderTable(rows: readonly Row[]): string {
  const lines = [
    '| scenario | metric | Sundial | BullMQ | ratio | target | met? |',
    '|---|---|---:|---:|---:|---|:---:|',
  ];
  for (const r of rows) {
    const share = ratio(r.sundial ?? NaN, r.bullmq ?? NaN);
    const met = r.met === null ? (r.note ?? '') : r.met ? 'yes' : '**no**';
    lines.push(
      `| ${r.scenario} | ${r.metric} | ${formatValue(r.sundial)} | ${formatValue(r.bullmq)} | ` +
        `${Number.isFinite(share) ? `${share.toFixed(2)}×` : '—'} | ${r.target} | ${met} |`,
    );
  }
  return lines.join('\n');
}

function formatValue(value: number | null): string {
  return value === null || Number.isNaN(value) ? '—' : formatNumber(value);
}

export function formatNumber(value: number): string {
  const digits = Number.isInteger(value) || Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 2;
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** The Markdown the README quotes: how it ran, then the table. */
export function renderMarkdown(report: BenchReport): string {
  const { redis, sizes, machine } = report;
  const settings = Object.entries(redis.settings)
    .map(([name, value]) => `${name}=${value === '' ? '""' : value}`)
    .join(', ');
  return [
    `Sundial bench, ${sizes.mode} run, ${report.startedAt} (${Math.round(report.durationMs / 1000)} s).`,
    `Redis ${redis.version} (${settings}); Node ${machine.node}, ${machine.cpus} CPUs, ${machine.platform}.`,
    `Lateness clock: ${report.clock}`,
    '',
    renderTable(report.rows),
    '',
  ].join('\n');
}

/** Writes `<stem>.json`, `<stem>.md` and `<stem>.svg` into `dir`; returns their paths. */
export function writeReport(report: BenchReport, svg: string, dir: string, stem: string): string[] {
  mkdirSync(dir, { recursive: true });
  const files: Array<[string, string]> = [
    [`${stem}.json`, `${JSON.stringify(report, null, 2)}\n`],
    [`${stem}.md`, renderMarkdown(report)],
    [`${stem}.svg`, svg],
  ];
  return files.map(([name, text]) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  });
}

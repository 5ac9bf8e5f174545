import {
  constants,
  monitorEventLoopDelay,
  type PerformanceEntry,
  PerformanceObserver,
} from 'node:perf_hooks';
import type Redis from 'ioredis';
import { scriptOfCall } from '@sundial/redis';

/**
 * Opt-in (`BENCH_DIAG=1`) evidence of where tail latency comes from, printed into the bench log: how long
 * Redis spent in each call (every call goes into SLOWLOG; scripts named, with their argument counts) and
 * each bench process's event-loop delay. It changes nothing the report shows, but logging every call costs
 * Redis a little: compare diagnosed runs with diagnosed runs.
 */
export const DIAGNOSTICS = process.env.BENCH_DIAG === '1' || process.env.BENCH_DIAG === 'split';

/**
 * `BENCH_DIAG=split`: the diagnostics, and the churn's slowest calls split by Redis's MONITOR
 * (call-trace.ts). Apart because MONITOR costs Redis much more than SLOWLOG: on a loaded host it doubled
 * both contenders' churn p50 against `BENCH_DIAG=1` runs of the same build.
 */
export const CALL_SPLIT = process.env.BENCH_DIAG === 'split';

const SLOWLOG_KEPT = 200_000;
/** The longest calls listed one by one. */
const SLOWEST_SHOWN = 12;

/** Clears Redis's slow log (logging every call) and latency events, before the measured part of a run. */
export async function startRedisDiagnostics(admin: Redis): Promise<void> {
  if (!DIAGNOSTICS) return;
  await admin.config('SET', 'slowlog-log-slower-than', '0');
  await admin.config('SET', 'slowlog-max-len', String(SLOWLOG_KEPT));
  await admin.config('SET', 'latency-monitor-threshold', '1');
  await admin.slowlog('RESET');
  await admin.call('LATENCY', 'RESET');
}

/** Per command or script since startRedisDiagnostics: calls, time in Redis (p50/p99/max/total), longest calls. */
export async function redisDiagnostics(admin: Redis): Promise<string[]> {
  if (!DIAGNOSTICS) return [];
  const entries = (await admin.slowlog('GET', SLOWLOG_KEPT)) as [number, number, number, string[]][];
  await admin.config('SET', 'slowlog-log-slower-than', '10000');
  const calls = entries.map(([, , micros, args]) => ({
    micros,
    name: callName(args),
    args: argCount(args),
  }));
  const byName = new Map<string, number[]>();
  for (const { micros, name } of calls) {
    const times = byName.get(name) ?? [];
    times.push(micros);
    byName.set(name, times);
  }
  const lines = [...byName]
    .map(([name, times]) => ({ name, times: times.sort((a, b) => a - b) }))
    .filter(({ times }) => times.reduce((a, b) => a + b, 0) > 10_000 || times[times.length - 1] > 2_000)
    .map(({ name, times }) => {
      const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))];
      const total = times.reduce((a, b) => a + b, 0);
      return `redis ${name}: ${times.length} calls, µs p50 ${at(0.5)} p99 ${at(0.99)} max ${at(1)} total ${total}`;
    });
  const slowest = calls.sort((a, b) => b.micros - a.micros).slice(0, SLOWEST_SHOWN);
  lines.push(
    `redis slowest (µs, args): ${slowest.map((c) => `${c.name} ${c.micros} (${c.args})`).join(', ')}`,
  );
  const latency = (await admin.call('LATENCY', 'LATEST')) as [string, number, number, number][];
  for (const [event, , last, max] of latency)
    lines.push(`redis latency ${event}: last ${last} ms, max ${max} ms`);
  return lines;
}

/** A bench process's event-loop delay from now on; `stop()` describes it (undefined when diagnostics are off). */
export function watchEventLoop(): { stop(): string | undefined } {
  if (!DIAGNOSTICS) return { stop: () => undefined };
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  const cpuAtStart = process.cpuUsage();
  return {
    stop() {
      histogram.disable();
      const cpu = process.cpuUsage(cpuAtStart);
      const ms = (ns: number) => (ns / 1e6).toFixed(1);
      return (
        `event loop delay p50 ${ms(histogram.percentile(50))} ms, p99 ${ms(histogram.percentile(99))} ms, ` +
        `p99.9 ${ms(histogram.percentile(99.9))} ms, max ${ms(histogram.max)} ms; ` +
        `CPU ${Math.round((cpu.user + cpu.system) / 1000)} ms`
      );
    },
  };
}

/** A GC pause's kind as PerformanceObserver reports it (perf_hooks `constants.NODE_PERFORMANCE_GC_*`). */
export function gcKind(entry: PerformanceEntry): string {
  const kind = (entry as { detail?: { kind?: number } }).detail?.kind ?? 0;
  if (kind === constants.NODE_PERFORMANCE_GC_MINOR) return 'scavenge';
  if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) return 'mark-compact';
  if (kind === constants.NODE_PERFORMANCE_GC_INCREMENTAL) return 'incremental';
  if (kind === constants.NODE_PERFORMANCE_GC_WEAKCB) return 'weak callbacks';
  return `kind ${kind}`;
}

/** A span of this process's clock (`performance.now()` ms), e.g. one call from its start to its answer. */
export interface Span {
  start: number;
  end: number;
}

/**
 * Which of the slowest calls (`spans`, at or above `threshold` ms) a GC pause of this process held up,
 * from now until `describe` (undefined when diagnostics are off): tells a tail the caller's own process
 * made from one spent waiting on Redis.
 */
export function watchGcPauses(): { describe(spans: readonly Span[], threshold: number): string | undefined } {
  if (!DIAGNOSTICS) return { describe: () => undefined };
  const pauses: Array<Span & { kind: string }> = [];
  const record = (entries: readonly PerformanceEntry[]) => {
    for (const entry of entries)
      pauses.push({ start: entry.startTime, end: entry.startTime + entry.duration, kind: gcKind(entry) });
  };
  const observer = new PerformanceObserver((list) => record(list.getEntries()));
  observer.observe({ entryTypes: ['gc'] });
  return {
    describe(spans, threshold) {
      record(observer.takeRecords()); // the pauses not yet delivered to the callback
      observer.disconnect();
      const overlaps = (a: Span, b: Span) => a.start < b.end && a.end > b.start;
      // only the pauses while the calls ran (not those of reading the diagnostics afterwards)
      const window = spans.reduce(
        (all, call) => ({ start: Math.min(all.start, call.start), end: Math.max(all.end, call.end) }),
        { start: Infinity, end: -Infinity },
      );
      const during = pauses.filter((pause) => overlaps(pause, window));
      const slow = spans.filter(({ start, end }) => end - start >= threshold);
      const heldUp = slow.filter((call) => during.some((pause) => overlaps(pause, call)));
      const longest = Math.max(0, ...during.map((pause) => pause.end - pause.start));
      const total = during.reduce((sum, pause) => sum + pause.end - pause.start, 0);
      const kinds = new Map<string, number>();
      for (const { kind } of during) kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
      const named = [...kinds].map(([kind, count]) => `${count} ${kind}`).join(', ');
      return (
        `${slow.length} calls ≥ ${threshold.toFixed(2)} ms, ${heldUp.length} of them overlapping a GC pause ` +
        `of this process (${during.length} pauses meanwhile${named ? `: ${named}` : ''}, ` +
        `${total.toFixed(0)} ms in all, longest ${longest.toFixed(1)} ms)`
      );
    },
  };
}

/** A slow-log entry's command: a Sundial script by name, another script by its sha's or function's start. */
function callName(args: string[]): string {
  const command = String(args[0]).toLowerCase();
  const script = scriptOfCall(args);
  if (script) return script;
  if (command === 'eval') return 'eval';
  if (command !== 'evalsha' && command !== 'fcall') return command;
  return `${command}:${String(args[1]).slice(0, 8)}`;
}

/** SLOWLOG keeps 32 arguments and says how many more there were. */
function argCount(args: string[]): number {
  const more = /^\.\.\. \((\d+) more arguments\)$/.exec(String(args[args.length - 1]));
  return more ? args.length - 1 + Number(more[1]) : args.length;
}

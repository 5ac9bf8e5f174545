import { AsyncLocalStorage } from 'node:async_hooks';
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance, PerformanceObserver } from 'node:perf_hooks';
import Redis from 'ioredis';
import { type CallRecord, type CommandRecord, splitSlowest } from './call-split';
import { CALL_SPLIT } from './diagnostics';

/** Time to let `redis-cli monitor` connect before the first traced call, and to drain after the last. */
const MONITOR_SETTLE_MS = 300;

type SendCommand = (this: Redis, command: unknown, stream?: unknown) => unknown;
interface TracedCommand {
  name: string;
  resolve: (value: unknown) => void;
}

/** This process's clock as epoch µs (MONITOR prints epoch seconds with µs). */
const epochMicros = (): number => Math.round((performance.timeOrigin + performance.now()) * 1000);

/**
 * With BENCH_DIAG=split, for one measured window of the churn: each call's ioredis commands (when each was
 * written to its socket and when its reply was read, by AsyncLocalStorage the call it belongs to) and
 * Redis's MONITOR (each command's start, its scripts' inner commands, every client's), so `stop()` can say
 * where the slowest 1% of calls waited (call-split.ts): before the write, in Redis's queue behind which
 * command, in Redis, or for the bench to read the reply. MONITOR runs in its own process (`redis-cli`),
 * not in the measured one, but costs Redis per command: compare such runs only with each other.
 */
export class CallTrace {
  private readonly calls: CallRecord[] = [];
  private readonly commands: CommandRecord[] = [];
  private readonly gcPauses: Array<[start: number, end: number]> = [];
  private readonly context = new AsyncLocalStorage<CallRecord>();
  private readonly gcObserver = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const start = Math.round((performance.timeOrigin + entry.startTime) * 1000);
      this.gcPauses.push([start, start + Math.round(entry.duration * 1000)]);
    }
  });
  private readonly original: SendCommand;

  private constructor(
    private readonly dir: string,
    private readonly monitor: ReturnType<typeof spawn>,
  ) {
    const prototype = Redis.prototype as unknown as { sendCommand: SendCommand };
    this.original = prototype.sendCommand;
    const send = (redis: Redis, command: unknown, stream: unknown) =>
      this.send(redis, command as TracedCommand, stream);
    prototype.sendCommand = function (command, stream) {
      return send(this, command, stream);
    };
    this.gcObserver.observe({ entryTypes: ['gc'] });
  }

  /** Starts tracing (undefined unless `BENCH_DIAG=split`). */
  static async start(redisUrl: string): Promise<CallTrace | undefined> {
    if (!CALL_SPLIT) return undefined;
    const { hostname, port } = new URL(redisUrl);
    const dir = mkdtempSync(join(tmpdir(), 'sundial-bench-monitor-'));
    const out = openSync(join(dir, 'monitor.txt'), 'w');
    const monitor = spawn('redis-cli', ['-h', hostname, '-p', port, 'monitor'], {
      stdio: ['ignore', out, 'ignore'],
    });
    closeSync(out);
    monitor.on('error', () => undefined); // no redis-cli: the split says MONITOR saw nothing
    await new Promise((resolve) => setTimeout(resolve, MONITOR_SETTLE_MS));
    return new CallTrace(dir, monitor);
  }

  /** Runs one measured call, its commands recorded as its own. */
  call<T>(op: string, body: () => Promise<T>): Promise<T> {
    const record: CallRecord = { op, issued: epochMicros(), commands: [] };
    this.calls.push(record);
    return this.context.run(record, body).finally(() => {
      record.answered = epochMicros();
    });
  }

  /** Stops tracing; the split of the slowest 1% of calls, as log lines. */
  async stop(): Promise<string[]> {
    (Redis.prototype as unknown as { sendCommand: SendCommand }).sendCommand = this.original;
    this.gcObserver.disconnect();
    await new Promise((resolve) => setTimeout(resolve, MONITOR_SETTLE_MS));
    this.monitor.kill();
    const monitorText = readFileSync(join(this.dir, 'monitor.txt'), 'utf8');
    rmSync(this.dir, { recursive: true, force: true });
    return splitSlowest(this.calls, this.commands, monitorText, this.gcPauses);
  }

  private send(redis: Redis, command: TracedCommand, stream: unknown): unknown {
    const socket = (redis as unknown as { stream?: { localPort?: number } }).stream;
    const record: CommandRecord = { name: command.name, port: socket?.localPort, sent: epochMicros() };
    this.commands.push(record);
    this.context.getStore()?.commands.push(record);
    const resolve = command.resolve;
    command.resolve = (value) => {
      record.replied = epochMicros();
      resolve(value);
    };
    return this.original.call(redis, command, stream);
  }
}

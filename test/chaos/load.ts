import type { Timer, TimerSpec, TimersApi } from '@sundial/core';
import { type HttpClient, keyPath } from '@sundial/testing/harness';

/** What one write call answered, as its caller saw it. */
export interface Write {
  op: 'schedule' | 'cancel';
  key: string;
  via: 'http' | 'client';
  /**
   * `ok`: the call said it happened (a schedule returned its timer, a cancel true); `false`: a cancel
   * said there was nothing to cancel; `refused`: an error that says nothing changed; `unknown`: no
   * answer (the process or link died, the deadline passed) or an error that says the outcome is unknown
   */
  answer: 'ok' | 'false' | 'refused' | 'unknown';
  /** the error's reason (or HTTP status) and message */
  reason?: string;
  message?: string;
  /** the timer a schedule returned (its id and version are now acknowledged) */
  timer?: Timer;
  /** the id a cancel aimed at */
  id?: string;
  sentAt: number;
  answeredAt: number;
}

/**
 * The mix every scenario runs: one-shots (quick and long handlers), intervals both `awaitTask` ways,
 * a seconds cron, both deliveries. Every timer keeps its final row (`removeOnComplete: false`) so the
 * ledger can read how it ended, and every key is used once so a refused write can be checked.
 */
const MIX: ((key: string, jitter: number) => TimerSpec)[] = [
  (key, j) => ({ key, handler: 'record', delay: 1_000 + j }),
  (key, j) => ({ key, handler: 'record', delay: 1_000 + j, delivery: 'at-most-once' }),
  (key, j) => ({ key, handler: 'slow', payload: { ms: 2_500 }, delay: 800 + j }),
  (key, j) => ({ key, handler: 'slow', payload: { ms: 2_500 }, delay: 800 + j, delivery: 'at-most-once' }),
  (key) => ({ key, handler: 'slow', payload: { ms: 200 }, every: 1_000, maxRuns: 3 }),
  (key) => ({ key, handler: 'slow', payload: { ms: 900 }, every: 700, maxRuns: 4, awaitTask: false }),
  (key) => ({
    key,
    handler: 'record',
    cron: '*/2 * * * * *',
    tz: 'UTC',
    maxRuns: 2,
    delivery: 'at-most-once',
  }),
  (key) => ({ key, handler: 'slow', payload: { ms: 300 }, every: 900, maxRuns: 2, delivery: 'at-most-once' }),
];
/** Every CANCEL_EVERY-th quick one-shot is cancelled soon after it was created, well before its due. */
const CANCEL_EVERY = 5;

export interface LoadOptions {
  client: TimersApi;
  /** the schedulers' HTTP APIs: half the writes go through them, in turn (a dead one answers nothing) */
  apis: () => HttpClient[];
  prefix: string;
  /** timers written per tick, one tick every TICK_MS */
  perTick: number;
}

const TICK_MS = 250;
/** No write may hang the load: one that has not answered by then counts as refused (`timeout`). */
const CALL_DEADLINE_MS = 15_000;

/** A steady mixed load until `stop()`; `writes` lists every call and its answer. */
export class Load {
  readonly writes: Write[] = [];
  private stopped = false;
  private readonly inFlight = new Set<Promise<void>>();
  private count = 0;
  private done: Promise<void> | undefined;

  constructor(private readonly options: LoadOptions) {}

  start(): void {
    this.done = this.loop();
  }

  /** Stops writing and waits for the calls in flight to answer. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.done;
    await Promise.all(this.inFlight);
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      const tick = Date.now();
      for (let i = 0; i < this.options.perTick; i++) this.track(this.scheduleOne(this.count++));
      await new Promise((wake) => setTimeout(wake, Math.max(0, TICK_MS - (Date.now() - tick))));
    }
  }

  private track(call: Promise<void>): void {
    this.inFlight.add(call);
    void call.finally(() => this.inFlight.delete(call));
  }

  private async scheduleOne(n: number): Promise<void> {
    const key = `${this.options.prefix}:${n}`;
    const spec = { ...MIX[n % MIX.length](key, (n * 37) % 1_500), removeOnComplete: false };
    const apis = this.options.apis();
    const http = n % 2 === 1 && apis.length > 0 ? apis[Math.floor(n / 2) % apis.length] : undefined;
    const write = await this.call('schedule', key, http, async () =>
      http ? viaHttp(await http<Timer>('POST', '/v1/timers', spec), 201) : this.options.client.schedule(spec),
    );
    if (write.answer !== 'ok' || n % (MIX.length * CANCEL_EVERY) !== 0 || this.stopped) return;
    await new Promise((wake) => setTimeout(wake, 200));
    await this.call(
      'cancel',
      key,
      http,
      async () => {
        if (!http) return this.options.client.cancel(key);
        return viaHttp(await http<{ cancelled: boolean }>('DELETE', keyPath(key)), 200).cancelled;
      },
      write.timer!.id,
    );
  }

  private async call(
    op: Write['op'],
    key: string,
    http: HttpClient | undefined,
    act: () => Promise<Timer | boolean>,
    id?: string,
  ): Promise<Write> {
    const via = http ? 'http' : 'client';
    const write: Write = { op, key, via, id, answer: 'refused', sentAt: Date.now(), answeredAt: 0 };
    this.writes.push(write);
    try {
      const answer = await withDeadline(act());
      write.answer = answer === false ? 'false' : 'ok';
      if (typeof answer === 'object') write.timer = answer;
    } catch (error) {
      const { reason, message } = error as { reason?: string; message?: string };
      write.reason = reason;
      write.message = message;
      write.answer = reason === undefined || UNKNOWN_OUTCOME.test(message ?? '') ? 'unknown' : 'refused';
    }
    write.answeredAt = Date.now();
    return write;
  }
}

/** An error that does not claim nothing changed: its caller must find out (issue 8 defect 2). */
const UNKNOWN_OUTCOME = /may or may not|outcome is unknown/i;

/** The body of an expected answer; any other answer throws its reason (`<status> <reason>`) and message. */
function viaHttp<T>(reply: { status: number; body: T }, expected: number): T {
  if (reply.status === expected) return reply.body;
  const error = (reply.body as { error?: { reason?: string; message?: string } }).error;
  throw Object.assign(new Error(error?.message ?? `HTTP ${reply.status}`), {
    reason: `${reply.status} ${error?.reason ?? ''}`.trim(),
  });
}

function withDeadline<T>(call: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${CALL_DEADLINE_MS} ms`)), CALL_DEADLINE_MS);
  });
  return Promise.race([call, deadline]).finally(() => clearTimeout(timer));
}

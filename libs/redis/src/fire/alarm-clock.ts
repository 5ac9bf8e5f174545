import { Worker } from 'node:worker_threads';

// Why a file of its own: Node's timers wake in whole milliseconds of a loop clock read before the call, so a
// run claimed ahead started 0.1–1.2 ms after its due as a rule (p50 ~0.6 ms) and, woken a fraction early,
// a whole ms later still. A thread that sleeps in `Atomics.wait` (which takes fractional ms) and posts a
// message at the tick wakes this thread's event loop within ~0.1–0.2 ms (p99 ~0.3–0.5 ms on an idle host):
// docs/design.md "The wake itself". One thread serves every wait of the process; it stops when
// idle, and no wait keeps a process up longer than a pending timer would.

/** Without a wait for this long the thread ends; the next wait starts another. */
const IDLE_MS = 5_000;

/**
 * The thread: `state[0]` is bumped by every change of `state[1]`, the next tick in µs of `process.hrtime`
 * (the one monotonic clock every thread of the process reads), 0 for none and -1 to end. At the tick it
 * takes the tick (compare-and-swap, so a tick re-armed meanwhile is kept) and posts a message.
 */
const THREAD = `'use strict';
const { workerData, parentPort } = require('node:worker_threads');
const state = new BigInt64Array(workerData);
for (;;) {
  const seen = Atomics.load(state, 0);
  const tick = Atomics.load(state, 1);
  if (tick < 0n) break;
  if (tick === 0n) { Atomics.wait(state, 0, seen); continue; }
  const leftMs = Number(tick - process.hrtime.bigint() / 1000n) / 1000;
  if (leftMs > 0) Atomics.wait(state, 0, seen, leftMs);
  else if (Atomics.compareExchange(state, 1, tick, 0n) === tick) parentPort.postMessage(null);
}`;

interface Wait {
  tick: number;
  resolve: () => void;
}

/**
 * Resolves waits at their `performance.now()` tick, never before (each message is checked against the
 * clock, and a wait not yet reached is armed again). Waits are kept by tick; the thread is armed for the
 * first.
 */
export class AlarmClock {
  private readonly state = new BigInt64Array(new SharedArrayBuffer(16));
  /** ascending by tick */
  private readonly waits: Wait[] = [];
  private readonly thread: Worker;
  /** `process.hrtime` ms minus `performance.now()`: constant, both read the same monotonic clock */
  private readonly origin = clockOrigin();
  private online = false;
  private ended = false;
  private idle: NodeJS.Timeout | undefined;
  /** waits resolved at the thread's message: what a test checks the alarm by */
  rang = 0;

  constructor(private readonly onEnd: () => void) {
    this.thread = new Worker(THREAD, { eval: true, workerData: this.state.buffer });
    this.thread.once('online', () => (this.online = true));
    this.thread.on('message', () => this.ring());
    // A thread that cannot start (or ends) leaves the waits it holds to the timers' path.
    this.thread.once('error', () => this.end());
    this.thread.once('exit', () => this.end());
    // after the listeners: a 'message' listener refs the thread's port again
    this.thread.unref();
  }

  /** False until the thread runs: meanwhile callers wait with timers. */
  get ready(): boolean {
    return this.online;
  }

  wait(tick: number): Promise<void> {
    return new Promise((resolve) => {
      const { waits } = this;
      let at = waits.length;
      while (at > 0 && waits[at - 1].tick > tick) at--;
      waits.splice(at, 0, { tick, resolve });
      if (at > 0) return;
      if (waits.length === 1) this.busy();
      this.arm(tick);
    });
  }

  private ring(): void {
    const now = performance.now();
    const { waits } = this;
    let due = 0;
    while (due < waits.length && waits[due].tick <= now) due++;
    const ringing = waits.splice(0, due);
    this.rang += ringing.length;
    for (const wait of ringing) wait.resolve();
    if (waits.length > 0) this.arm(waits[0].tick);
    else if (due > 0) this.quiet();
  }

  /** µs rounded up: the thread never posts before the tick. */
  private arm(tick: number): void {
    Atomics.store(this.state, 1, BigInt(Math.ceil((tick + this.origin) * 1_000)));
    Atomics.add(this.state, 0, 1n);
    Atomics.notify(this.state, 0);
  }

  /** A wait pending keeps the process up, as its timer would. */
  private busy(): void {
    clearTimeout(this.idle);
    this.thread.ref();
  }

  private quiet(): void {
    this.thread.unref();
    this.idle = setTimeout(() => this.stop(), IDLE_MS).unref();
  }

  private stop(): void {
    Atomics.store(this.state, 1, -1n);
    Atomics.add(this.state, 0, 1n);
    Atomics.notify(this.state, 0);
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    this.online = false;
    clearTimeout(this.idle);
    this.onEnd();
    // What it still held wakes by the timers' path (the caller checks the clock again).
    for (const wait of this.waits.splice(0)) wait.resolve();
  }
}

/** Read `performance.now()` first: the origin comes out a few ns late at most, so a tick is never armed early. */
function clockOrigin(): number {
  const now = performance.now();
  const [seconds, nanoseconds] = process.hrtime();
  return seconds * 1_000 + nanoseconds / 1e6 - now;
}

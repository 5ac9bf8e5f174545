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
 * Coming ticks the thread is shown at once: it goes from one to the next without being woken by this
 * thread (one sleep a tick, not two). Runs claimed ahead at thousands a second have a few ms of them.
 */
const WINDOW = 16;

/** The shared state's slots (a BigInt64Array): */
const GEN = 0; // bumped before and after each write of the window: odd while writing; the thread's futex word
const POSTED = 1; // the last tick the thread posted (written by the thread only)
const END = 2; // not 0: the thread ends
const FIRST = 3; // WINDOW ticks from here, ascending and distinct, 0 after the last

/**
 * The thread. Ticks are µs of `process.hrtime` (the one monotonic clock every thread of the process
 * reads). It reads the window as a seqlock (again if GEN moved), sleeps until the first tick after the
 * last it posted, then posts a message and records that tick. Asleep, it sleeps on GEN: this thread
 * wakes it only when what it waits for changed.
 */
const THREAD = `'use strict';
const { workerData, parentPort } = require('node:worker_threads');
const state = new BigInt64Array(workerData);
for (;;) {
  const seen = Atomics.load(state, ${GEN});
  if (Atomics.load(state, ${END}) !== 0n) break;
  if ((seen & 1n) === 1n) continue;
  const posted = Atomics.load(state, ${POSTED});
  let next = 0n;
  for (let i = ${FIRST}; i < state.length; i++) {
    const tick = Atomics.load(state, i);
    if (tick === 0n || tick > posted) { next = tick; break; }
  }
  if (Atomics.load(state, ${GEN}) !== seen) continue;
  if (next === 0n) { Atomics.wait(state, ${GEN}, seen); continue; }
  const leftMs = Number(next - process.hrtime.bigint() / 1000n) / 1000;
  if (leftMs > 0) { Atomics.wait(state, ${GEN}, seen, leftMs); continue; }
  Atomics.store(state, ${POSTED}, next);
  parentPort.postMessage(null);
}`;

interface Wait {
  tick: number;
  resolve: () => void;
}

/**
 * Resolves waits at their `performance.now()` tick, never before (each message is checked against the
 * clock). Waits are kept by tick; the thread is shown the first WINDOW distinct ones.
 */
export class AlarmClock {
  private readonly state = new BigInt64Array(new SharedArrayBuffer(8 * (FIRST + WINDOW)));
  /** ascending by tick */
  private readonly waits: Wait[] = [];
  /** the window as last written: µs ticks, ascending and distinct */
  private shown: bigint[] = [];
  private readonly thread: Worker;
  /** `process.hrtime` ms minus `performance.now()`: constant, both read the same monotonic clock */
  private readonly origin = clockOrigin();
  private online = false;
  private ended = false;
  private idle: NodeJS.Timeout | undefined;
  /** waits resolved at the thread's message: what a test checks the alarm by */
  rang = 0;
  /** times the thread was woken because what it waited for changed (a test checks it is seldom) */
  nudged = 0;

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
      if (waits.length === 1) this.busy();
      if (this.changesWindow(this.micros(tick))) this.show();
    });
  }

  /** Whether a new tick belongs in the window: not there yet, and before its last unless it has room. */
  private changesWindow(tick: bigint): boolean {
    const { shown } = this;
    if (shown.includes(tick)) return false;
    return shown.length < WINDOW || tick < shown[WINDOW - 1];
  }

  /** µs of `process.hrtime`, rounded up: the thread never posts before a tick. */
  private micros(tick: number): bigint {
    return BigInt(Math.ceil((tick + this.origin) * 1_000));
  }

  private ring(): void {
    const now = performance.now();
    const { waits } = this;
    let due = 0;
    while (due < waits.length && waits[due].tick <= now) due++;
    const ringing = waits.splice(0, due);
    this.rang += ringing.length;
    for (const wait of ringing) wait.resolve();
    if (due === 0) return;
    this.show();
    if (waits.length === 0) this.quiet();
  }

  /**
   * Writes the first WINDOW distinct ticks for the thread, and wakes it when the first one after the last it posted changed — read after the write, so a post
   * meanwhile is either seen here or followed by the thread's reading of the new window.
   */
  private show(): void {
    const ticks: bigint[] = [];
    for (const wait of this.waits) {
      const tick = this.micros(wait.tick);
      if (ticks[ticks.length - 1] !== tick) ticks.push(tick);
      if (ticks.length === WINDOW) break;
    }
    const { state, shown } = this;
    if (ticks.length === shown.length && ticks.every((tick, i) => tick === shown[i])) return;
    Atomics.add(state, GEN, 1n);
    for (let i = 0; i < WINDOW; i++) Atomics.store(state, FIRST + i, ticks[i] ?? 0n);
    Atomics.add(state, GEN, 1n);
    const posted = Atomics.load(state, POSTED);
    if (firstAfter(ticks, posted) !== firstAfter(shown, posted)) {
      this.nudged++;
      Atomics.notify(state, GEN);
    }
    this.shown = ticks;
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
    Atomics.store(this.state, END, 1n);
    Atomics.add(this.state, GEN, 2n);
    Atomics.notify(this.state, GEN);
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

/** The first of ascending `ticks` after `posted`, or 0n for none. */
function firstAfter(ticks: readonly bigint[], posted: bigint): bigint {
  return ticks.find((tick) => tick > posted) ?? 0n;
}

/** Read `performance.now()` first: the origin comes out a few ns late at most, so a tick is never armed early. */
function clockOrigin(): number {
  const now = performance.now();
  const [seconds, nanoseconds] = process.hrtime();
  return seconds * 1_000 + nanoseconds / 1e6 - now;
}

import { isConnectionFailure } from '../infra/connection-failure';
import type { Completion, FireCommands } from '../store/fire-commands';
import type { CompleteReply } from '../store/replies';
import { resendSafe, type ScriptRequest } from '../store/requests';
import { RunFlight } from './run-flight';

interface Waiting {
  completion: Completion;
  resolve(result: CompleteReply): void;
  reject(error: unknown): void;
  /** a call carrying it went out on a ready connection: Redis may run it, answered or not */
  written?: boolean;
}

/**
 * A completion given up on without an answer (Redis unreachable once the runner stopped trying): `written`
 * when a call carrying it went out on a ready connection — a Redis that reads it later (one frozen, not
 * gone) still runs it and records its outcome —, else it never reached Redis and recorded nothing.
 */
export class UnansweredCompletion extends Error {
  constructor(
    override readonly cause: unknown,
    readonly written: boolean,
  ) {
    super((cause as Error)?.message ?? String(cause));
  }
}

export interface CompletionBatcherOptions {
  /**
   * How long Redis remembers a batch's answer: a retry of the same batch (same request id) within it
   * answers as the first try did, so a completion that went through before its reply was lost is not
   * reported stale.
   */
  memoryMs: number;
  /** Whether a batch that failed for want of Redis is tried again (the runner: until its grace is over). */
  keepTrying(): boolean;
  /** pause between tries while Redis is unreachable */
  retryMs?: number;
  /**
   * Whether claim calls carry completions (`ride`, RidingClaims): then a batch whose linger is over waits
   * up to LINGER_MS more for a claim call to go in the same socket write, before it goes alone.
   */
  rides?: boolean;
}

const DEFAULT_RETRY_MS = 200;
/**
 * Completions per call at most: a backlog's batch (~20 µs of Redis per run) holds Redis for a few
 * milliseconds at most, so the claims of runs falling due meanwhile do not wait long behind it.
 */
const MAX_BATCH = 100;
/**
 * How long a completion waits for others before its call goes, when none of its partition is in flight.
 * At 1,000 runs/s each run ended alone and cost a call of its own (~100 µs of Redis fixed per call, a
 * round trip and a socket write of the worker's); waiting 5 ms puts ~3–5 runs in a call (bench, 1,000/s). Nothing waits on
 * it but the run's row (`running` those few ms longer) and its job's consumer slot; in a backlog a call
 * is in flight and the next goes when it returns, as before.
 */
const LINGER_MS = 5;
/**
 * Calls on their way at once per partition when full batches wait (a partial batch waits for the call on
 * its way, as above). One at a time kept a backlog's completions behind its claims: with the runner's
 * flight limit (run-flight.ts) the claims then waited on completions that went 100 a round trip, and
 * Redis idled in between (docs/design.md "The worker's heap in a backlog").
 */
const FULL_CALLS = 3;
/**
 * Claim copies (completion.ts claimCopy) a call sends at least, else it sends none: a copy saves its run's
 * `HMGET`, but a call that takes copies pays a `ZMSCORE` of the leases and a `GET` of the live-id bitmap
 * (complete.lua) — one command more for a lone run, as many at two, fewer from three (docs/design.md
 * "Read-free completion").
 */
const MIN_COPIES = 3;

/**
 * Sends completions as one complete.lua call per partition, and at most one call in flight per partition:
 * those settled while a call is on its way (or within LINGER_MS of the first) go together in the next one,
 * so a burst of short runs costs a few round trips, not one each, and the busier Redis is the fuller the
 * batches get. A batch that fails because Redis is unreachable is kept and sent again, under the same
 * request id, until Redis answers (issue 8: a finished run is not run again because an outage outlasted
 * ioredis's retries); completions settled meanwhile wait for it.
 */
export class CompletionBatcher {
  /** counts each completion from `complete` until its answer; the runner's claims wait while it is full */
  readonly flight = new RunFlight();
  private waiting = new Map<number, Waiting[]>();
  /** calls on their way per partition */
  private readonly sending = new Map<number, number>();
  /** the linger's timer, then (with rides) the timer that sends the batches no claim call took */
  private timer: NodeJS.Timeout | undefined;
  /** the linger is over: the next claim call takes what waits (rides) */
  private ripe = false;

  constructor(
    private readonly commands: FireCommands,
    private readonly options: CompletionBatcherOptions,
  ) {}

  complete(partition: number, completion: Completion): Promise<CompleteReply> {
    this.flight.add(partition, 1);
    return new Promise((resolve, reject) => {
      const list = this.waiting.get(partition) ?? [];
      this.waiting.set(partition, list);
      list.push({ completion, resolve, reject });
      this.timer ??= setTimeout(() => this.lingered(), LINGER_MS);
    });
  }

  /**
   * A claim call is being written (its socket corked): what waits past its linger goes on `claims`, in
   * the same write — one wake of Redis and one syscall instead of two (each ~10–30 µs of the worker's
   * CPU on the bench's VM). The claim is written first, so Redis answers it before it runs the batch.
   */
  ride(claims: FireCommands): void {
    if (this.ripe) this.flush(claims);
  }

  private lingered(): void {
    if (!this.options.rides) return this.flush(this.commands);
    this.ripe = true;
    this.timer = setTimeout(() => this.flush(this.commands), LINGER_MS);
  }

  private flush(commands: FireCommands): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.ripe = false;
    for (const partition of [...this.waiting.keys()]) this.sendNext(partition, commands);
  }

  /** Sends what waits for `partition` unless a call of it is in flight (its end sends the rest) and no full batch waits. */
  private sendNext(partition: number, commands = this.commands): void {
    const list = this.waiting.get(partition);
    const calls = this.sending.get(partition) ?? 0;
    // a second call only for a full batch: in a backlog the completions keep pace with the claims
    if (!list || (calls > 0 && (calls >= FULL_CALLS || list.length < MAX_BATCH))) return;
    const batch = list.splice(0, MAX_BATCH);
    if (list.length === 0) this.waiting.delete(partition);
    this.sending.set(partition, calls + 1);
    this.send(partition, batch, resendSafe(this.options.memoryMs), commands);
    if ((this.waiting.get(partition)?.length ?? 0) >= MAX_BATCH) this.sendNext(partition, commands);
  }

  /**
   * Whether what waits for `partition` when its call returns goes at once: a full batch, or a linger
   * over (no linger timer running: the flush that ended it passed this partition by while its call was
   * on its way; or ripe, waiting for a claim to ride). Otherwise the running linger's flush sends it —
   * at 10,000 runs/s the calls went one per round trip (~3 ms, ~30 runs each), each with the ~10
   * commands a complete call sends whatever its size (docs/design.md "Commands per fired timer").
   */
  private lingerOver(partition: number): boolean {
    const waiting = this.waiting.get(partition)?.length ?? 0;
    return this.timer === undefined || this.ripe || waiting >= MAX_BATCH;
  }

  /** A retry goes on the command connection, under the same request id. */
  private send(partition: number, list: Waiting[], request: ScriptRequest, commands = this.commands): void {
    const done = (): void => {
      this.flight.done(partition, list.length);
      this.sending.set(partition, (this.sending.get(partition) ?? 1) - 1);
      if (this.lingerOver(partition)) this.sendNext(partition);
    };
    if (commands.connected) for (const entry of list) entry.written = true;
    commands.complete(partition, withCopiesWorthIt(list), request).then(
      (results) => {
        list.forEach((entry, i) => entry.resolve(results[i]));
        done();
      },
      (error: unknown) => {
        if (isConnectionFailure(error) && this.options.keepTrying()) {
          setTimeout(() => this.send(partition, list, request), this.options.retryMs ?? DEFAULT_RETRY_MS);
        } else {
          const failure = (entry: Waiting) =>
            isConnectionFailure(error) ? new UnansweredCompletion(error, entry.written === true) : error;
          list.forEach((entry) => entry.reject(failure(entry)));
          done();
        }
      },
    );
  }
}

/** The batch's completions, without their claim copies when too few carry one to pay (MIN_COPIES). */
function withCopiesWorthIt(list: Waiting[]): Completion[] {
  const completions = list.map((entry) => entry.completion);
  if (completions.filter((c) => c.claim).length >= MIN_COPIES) return completions;
  return completions.map((c) => (c.claim ? { ...c, claim: undefined } : c));
}

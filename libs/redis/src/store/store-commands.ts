import { type CancelOutcome, fromStart, liveCronSlot, type NormalizedSpec, refusals } from '@sundial/core';
import type { RedisClient } from '../infra/connection';
import type { ClusterClock } from '../infra/cluster-clock';
import type { SundialKeys } from './keys';
import { fencedArgv1, fenceRefusal } from './layout-fence';
import { parseCancelReply } from './cancel-reply';
import { parseRowReply, parseScheduleReply, type RawScheduleReply, type RowReply } from './replies';
import { CancelAllCalls } from './cancel-all-calls';
import { replayOf } from './replayed';
import { type CallRequests, namedCall, requestPrefix, type ScriptRequest } from './requests';
import type { RowFields } from './row';
import { scheduleArgs, type ScheduleArgs } from './schedule-args';
import { firstCalls, guardKeys, scheduleCalls } from './schedule-calls';
import { runScript, type ScriptArg, type ScriptName } from './script-loader';

/** Keys per guard call: a read of `keys` (one ZMSCORE) and of the rows that exist, ~0.1 µs per new key. */
const GUARD_BATCH = 1000;
/** A guard call's specs: none. */
const NO_SPECS: ScheduleArgs = { specs: [], distinct: true, plain: false };
/** A cron script refuses an occurrence that is not after Redis now; this many fresh tries always suffice. */
const MAX_CLOCK_RETRIES = 5;

export interface StoreSettings {
  /** how long a cancelled key stays cancelled for `ifExists: 'keep'` */
  tombstoneMs: number;
  /** keys cancelled per cancel-all call */
  cancelBatch: number;
}

/**
 * What a schedule write is given by its caller (client/write-replies.ts `scheduleCodec`): `encode` makes
 * the rows of a call (given the indexes of its specs), `answer` a spec's answer from its reply and row,
 * `duplicate` the refusal of a key found live (it names the spec in a batch).
 */
export interface ScheduleCodec<T> {
  encode(indexes: number[]): RowFields[];
  /** `reply.again`: the call's first answer given again for the caller's request (its first call counted it) */
  answer(index: number, reply: RowReply, row: RowFields): T;
  duplicate(key: string): unknown;
}

/**
 * Typed calls to the store's Lua commands (docs/design.md "Store scripts and arguments"): argument
 * packing, batching and reply parsing, beside `FireCommands` for the fire path. Each write names its
 * calls' requests (`requests(part)`), so a call repeated after a lost reply answers as the first did
 * (docs/design.md "Repeated calls").
 */
export class StoreCommands {
  private readonly tombstoneMs: number;
  /** cancelAll's calls: its batches, a scope record's sweep, a read's settle (cancel-all-calls.ts) */
  readonly cancels: CancelAllCalls;

  /** `clock`: crons are computed in JS from (an estimate of) Redis now. */
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: SundialKeys,
    private readonly clock: ClusterClock,
    settings: StoreSettings,
  ) {
    this.tombstoneMs = settings.tombstoneMs;
    const run = (script: ScriptName, base: string, request: ScriptRequest, ...args: ScriptArg[]) =>
      this.run(script, base, this.argv1(request), ...args);
    this.cancels = new CancelAllCalls(keys, run, settings);
  }

  /**
   * Schedules `specs`, one call per partition and SCHEDULE_BATCH specs, all sent at once: each call's rows
   * are encoded (`encode`, given the indexes of its specs) just before it is sent, so Redis runs the
   * first call while the next ones are being encoded, and each call's replies are turned into the
   * caller's answers (`answer`, given a spec's index, reply and row) as they arrive, while Redis runs
   * the later calls. Answers in the order of `specs`; refuses a live key (`duplicate`) with the whole
   * batch unchanged (a key named twice was refused before, `refuseRepeatedKeys`): in one partition its first call checks the keys of the others (guards) and they run only
   * if it was answered 'ok' (schedule.lua); over several partitions `refuseDuplicates` checks them all first.
   * `unless`: a caller's other request (`WriteOptions.unlessAnswered`, one spec) whose call, answered,
   * refuses this one `duplicate-key` unchanged.
   */
  async scheduleAll<T>(
    specs: NormalizedSpec[],
    { encode, answer, duplicate }: ScheduleCodec<T>,
    requests: CallRequests,
    unless?: string,
  ): Promise<T[]> {
    const calls = scheduleCalls(
      this.keys,
      specs.map((spec) => spec.key),
    );
    const partitions = new Set(calls.map((call) => call.partition)).size;
    // A retry's calls answer as they did the first time: its own keys are no duplicates.
    const checked = calls.length > 1 && !requests.repeated;
    if (checked && partitions > 1) await this.refuseDuplicates(specs, duplicate, firstCalls(calls, requests));
    const answers: T[] = new Array<T>(specs.length);
    const firsts = new Map<number, { id: string; done: Promise<RowReply[]> }>();
    await Promise.all(
      calls.map(async ({ partition, indexes }, n) => {
        const first = firsts.get(partition); // undefined: this is the partition's first call
        const guards = !first && checked && partitions === 1 ? guardKeys(specs, calls, n) : [];
        const request = requests(`s${n}`);
        const rows = encode(indexes);
        const run = () =>
          this.withRedisNow((now) =>
            this.scheduleScript(
              partition,
              this.argv1(request),
              first?.id ?? '',
              guards,
              scheduleArgs(indexes, specs, rows, now),
              requests,
              unless === undefined ? undefined : namedCall(unless, `s${n}`),
            ),
          );
        const sent = run();
        if (!first) firsts.set(partition, { id: request.id, done: sent });
        let batch = await sent;
        if (first && batch[0].code === 'refused') {
          // Sent before the first call settled: it refused the batch, or asked Redis again (a cron's
          // 'retry') and was answered after this call had run. Then once more.
          if ((await first.done)[0].code === 'duplicate') return;
          batch = await run();
          if (batch[0].code === 'refused')
            throw new Error(`schedule call ${n} found its batch's first call unanswered`);
        }
        if (batch[0].code === 'duplicate') throw duplicate(batch[0].fields.key);
        batch.forEach((reply, j) => (answers[indexes[j]] = answer(indexes[j], reply, rows[j])));
      }),
    );
    return answers;
  }

  /**
   * Each script refuses duplicates atomically, but only within its call: before a batch whose calls span
   * several partitions, look for a live duplicate anywhere so a refused batch changes nothing — schedule
   * calls with the keys as guards and no spec, as bounded as the writes. (A concurrent writer can still
   * win the race between check and write.) `firsts`: a caller's request's first call per partition: one
   * answered ('passed') was a twin's of this request (sent at once), which passed this check and wrote.
   */
  private async refuseDuplicates(
    specs: NormalizedSpec[],
    duplicate: ScheduleCodec<unknown>['duplicate'],
    firsts: Map<number, string>,
  ): Promise<void> {
    const strict = specs.filter((spec) => spec.ifExists === 'error').map((spec) => spec.key);
    const replies = await Promise.all(
      scheduleCalls(this.keys, strict, GUARD_BATCH).map(({ partition, indexes }) =>
        this.guard(
          partition,
          indexes.map((i) => strict[i]),
          firsts.get(partition) ?? '',
        ),
      ),
    );
    if (replies.flat().some((reply) => reply.code === 'passed')) return;
    // each guard call answers its first live key in spec order: the batch's first is the earliest of
    // those, whatever its partition (docs/spec.md §3.1: the spec that asked for it, as on the engine)
    const live = replies
      .flat()
      .filter((reply) => reply.code === 'duplicate')
      .map((reply) => strict.indexOf(reply.fields.key))
      .sort((a, b) => a - b);
    if (live.length > 0) throw duplicate(strict[live[0]]);
  }

  /**
   * Runs `attempt` with the best estimate of Redis now; when the script answers 'retry' (the estimate was
   * behind, so a cron occurrence was not in the future; the call changed nothing) it tries again from
   * the Redis now it reported.
   */
  private async withRedisNow(attempt: (now: number) => Promise<RowReply[]>): Promise<RowReply[]> {
    let now = this.clock.now();
    for (let tries = 1; tries <= MAX_CLOCK_RETRIES; tries++) {
      const replies = await attempt(now);
      if (replies[0]?.code !== 'retry') return replies;
      now = Math.max(Number(replies[0].fields.now), now + 1);
      await this.clock.sync(1); // the offset drifted: measure it again for the next calls
    }
    throw new Error(`Redis kept answering 'retry' to cron occurrences computed from its own clock`);
  }

  /**
   * schedule.lua with guard keys and no spec: replies 'duplicate' when one of them is live (a read), or
   * 'passed' when the call `first` (a caller's request's first in the partition) was answered.
   */
  private guard(partition: number, keys: string[], first: string): Promise<RowReply[]> {
    const argv1 = fencedArgv1(this.keys.partitions, this.keys.prefix);
    return this.scheduleScript(partition, argv1, first, keys, NO_SPECS);
  }

  /**
   * What the cancel did (a live timer cancelled, a kept finished row removed, no row); `again`: by the first
   * call of the caller's request, whose kept answer (`q:<id>`, includes/requests.lua) this one was given
   * again (store/replayed.ts), so it is not counted twice.
   */
  async cancel(key: string, requests: CallRequests): Promise<{ outcome: CancelOutcome; again: boolean }> {
    const argv1 = this.argv1(requests('c'));
    const raw = await this.run('cancel', this.partitionBase(key), argv1, this.tombstoneMs, key);
    const { reply, again } = replayOf(raw, requests);
    return { outcome: parseCancelReply(reply), again };
  }

  reschedule(
    key: string,
    target: { delayMs: number } | { atMs: number },
    requests: CallRequests,
  ): Promise<RowReply> {
    const [mode, ms] = 'delayMs' in target ? ['delay', target.delayMs] : ['at', target.atMs];
    return this.onKey('reschedule', requests, key, mode, ms);
  }

  pause(key: string, requests: CallRequests): Promise<RowReply> {
    return this.onKey('pause', requests, key);
  }

  /**
   * A cron resumes at its next occurrence after Redis now (none before its startAt), computed here
   * (resume.lua asks again if late).
   */
  async resume(key: string, requests: CallRequests): Promise<RowReply> {
    const [cron, tz, st] = await this.redis.hmget(this.keys.row(key), 'cr', 'tz', 'st');
    const startAt = st === null ? undefined : Number(st);
    const [reply] = await this.withRedisNow(async (now) => [
      await this.onKey(
        'resume',
        requests,
        key,
        cron && tz ? liveCronSlot(cron, tz, fromStart({ startAt }, now)) : '',
      ),
    ]);
    return reply;
  }

  trigger(key: string, requests: CallRequests): Promise<RowReply> {
    return this.onKey('trigger', requests, key);
  }

  /** Runs `slots` (computed for the row's `id` and `version`) now, in order (backfill.lua). */
  backfill(
    key: string,
    row: { id: string; version: number },
    slots: number[],
    requests: CallRequests,
  ): Promise<RowReply> {
    return this.onKey('backfill', requests, key, row.id, row.version, JSON.stringify(slots));
  }

  /**
   * schedule.lua with its guard keys and specs (`scheduleArgs`) as one JSON text each: ioredis encodes
   * each command argument on its own and Redis parses each, which cost both sides about three times
   * what a JSON array's strings do (docs/design.md "Performance").
   */
  private async scheduleScript(
    partition: number,
    argv1: string,
    first: string,
    guards: string[],
    { specs, distinct, plain }: ScheduleArgs,
    requests?: CallRequests,
    unless?: string,
  ): Promise<RowReply[]> {
    const base = this.keys.base(partition);
    const flags = [distinct ? '1' : '', plain ? '1' : '', requests && !requests.named ? '1' : ''];
    const args = [this.tombstoneMs, first, JSON.stringify(guards), JSON.stringify(specs), ...flags];
    if (unless !== undefined) args.push(unless);
    const raw = await this.run('schedule', base, argv1, ...args);
    const { reply, again } = replayOf<RawScheduleReply>(raw, { named: requests?.named === true });
    const replies = parseScheduleReply(reply, partition, plain ? specs : undefined);
    if (again) for (const entry of replies) entry.again = true;
    return replies;
  }

  private onKey(
    script: ScriptName,
    requests: CallRequests,
    key: string,
    ...args: (string | number)[]
  ): Promise<RowReply> {
    const argv1 = this.argv1(requests('w'));
    return this.run(script, this.partitionBase(key), argv1, key, ...args).then((raw) => {
      const { reply, again } = replayOf<string[] | string>(raw, requests);
      return again ? { ...parseRowReply(reply), again } : parseRowReply(reply);
    });
  }

  private partitionBase(key: string): string {
    return this.keys.base(this.keys.partitionOf(key));
  }

  /** ARGV[1] of a write: our partition count (the layout fence), the prefix, the call's request. */
  private argv1(request: ScriptRequest): string {
    return fencedArgv1(this.keys.partitions, requestPrefix(this.keys.prefix, request));
  }

  /**
   * A write a repartition fenced off (this process has the old count) is refused, having changed nothing.
   * A `.catch`, not an async frame: this is on every write's way.
   */
  private run(script: ScriptName, base: string, argv1: string, ...args: ScriptArg[]): Promise<unknown> {
    return runScript(this.redis, script, base, this.keys.ledgerSize, argv1, ...args).catch(
      (error: unknown) => {
        const allowed = fenceRefusal(error);
        if (allowed === null) throw error;
        throw refusals.partitionsMoved(this.keys.prefix, allowed, this.keys.partitions);
      },
    );
  }
}

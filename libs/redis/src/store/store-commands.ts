import { type CancelOutcome, liveCronSlot, type NormalizedSpec, refusals } from '@sundial/core';
import type { RedisClient } from '../infra/connection';
import type { ClusterClock } from '../infra/cluster-clock';
import type { SundialKeys } from './keys';
import { fencedArgv1, fenceRefusal } from './layout-fence';
import { parseCancelReply } from './cancel-reply';
import { parseRowReply, parseScheduleReply, type RawScheduleReply, type RowReply } from './replies';
import { type CallRequests, requestPrefix, type ScriptRequest } from './requests';
import type { RowFields } from './row';
import { scheduleArgs, type ScheduleArgs } from './schedule-args';
import { runScript, type ScriptArg, type ScriptName } from './script-loader';

/**
 * Specs per schedule call (~10 µs of Redis each, and a fixed part per call worth ~1 µs per spec at this
 * size): a batch's calls are all sent at once, and Redis reads other clients' commands between them, so a
 * big batch holds it for about a millisecond at a time at most — the fire path's claims, due to the
 * millisecond, wait behind one call, not a whole batch.
 */
const SCHEDULE_BATCH = 100;
/** Keys per guard call: a read of `keys` (one ZMSCORE) and of the rows that exist, ~0.1 µs per new key. */
const GUARD_BATCH = 1000;
/** A guard call's specs: none. */
const NO_SPECS: ScheduleArgs = { specs: [], distinct: true, plain: false };
/** cancel-all calls in flight per partition: RedisClient never waits for the client between batches. */
const CANCEL_ALL_IN_FLIGHT = 4;
/** A cron script refuses an occurrence that is not after Redis now; this many fresh tries always suffice. */
const MAX_CLOCK_RETRIES = 5;

export interface StoreSettings {
  /** how long a cancelled key stays cancelled for `ifExists: 'keep'` */
  tombstoneMs: number;
  /** keys cancelled per cancel-all call */
  cancelBatch: number;
}

/** One schedule.lua call: a partition and the indexes (into the caller's array) of its specs. */
export interface ScheduleCall {
  partition: number;
  indexes: number[];
}

/**
 * What a schedule write is given by its caller (client/write-replies.ts `scheduleCodec`): `encode` makes
 * the rows of a call (given the indexes of its specs), `answer` a spec's answer from its reply and row,
 * `duplicate` the refusal of a key found live (it names the spec in a batch).
 */
export interface ScheduleCodec<T> {
  encode(indexes: number[]): RowFields[];
  /** `again`: the call's kept answer replayed for a caller's retry (its first call counted it) */
  answer(index: number, reply: RowReply, row: RowFields, again: boolean): T;
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
  private readonly cancelBatch: number;

  /** `clock`: crons are computed in JS from (an estimate of) Redis now. */
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: SundialKeys,
    private readonly clock: ClusterClock,
    settings: StoreSettings,
  ) {
    ({ tombstoneMs: this.tombstoneMs, cancelBatch: this.cancelBatch } = settings);
  }

  /**
   * Schedules `specs`, one call per partition and SCHEDULE_BATCH specs, all sent at once: each call's rows
   * are encoded (`encode`, given the indexes of its specs) just before it is sent, so Redis runs the
   * first call while the next ones are being encoded, and each call's replies are turned into the
   * caller's answers (`answer`, given a spec's index, reply and row) as they arrive, while Redis runs
   * the later calls. Answers in the order of `specs`; refuses a live key (`duplicate`) with the whole
   * batch unchanged (a key named twice was refused before, `refuseRepeatedKeys`): in one partition its first call checks the keys of the others (guards) and they run only
   * if it was answered 'ok' (schedule.lua); over several partitions `refuseDuplicates` checks them all first.
   */
  async scheduleAll<T>(
    specs: NormalizedSpec[],
    { encode, answer, duplicate }: ScheduleCodec<T>,
    requests: CallRequests,
  ): Promise<T[]> {
    const calls = this.scheduleCalls(specs.map((spec) => spec.key));
    const partitions = new Set(calls.map((call) => call.partition)).size;
    // A retry's calls answer as they did the first time: its own keys are no duplicates.
    const checked = calls.length > 1 && !requests.repeated;
    if (checked && partitions > 1) await this.refuseDuplicates(specs, duplicate);
    // A caller's retry: the calls whose answers Redis kept replay them (before any call is sent).
    const again = requests.repeated
      ? await Promise.all(calls.map(({ partition }, n) => this.kept(partition, requests, `s${n}`)))
      : [];
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
              !requests.named,
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
        batch.forEach(
          (reply, j) => (answers[indexes[j]] = answer(indexes[j], reply, rows[j], again[n] === true)),
        );
      }),
    );
    return answers;
  }

  /**
   * Each script refuses duplicates atomically, but only within its call: before a batch whose calls span
   * several partitions, look for a live duplicate anywhere so a refused batch changes nothing — schedule
   * calls with the keys as guards and no spec, as bounded as the writes. (A concurrent writer can still
   * win the race between check and write.)
   */
  private async refuseDuplicates(
    specs: NormalizedSpec[],
    duplicate: ScheduleCodec<unknown>['duplicate'],
  ): Promise<void> {
    const strict = specs.filter((spec) => spec.ifExists === 'error').map((spec) => spec.key);
    const replies = await Promise.all(
      this.scheduleCalls(strict, GUARD_BATCH).map(({ partition, indexes }) =>
        this.guard(
          partition,
          indexes.map((i) => strict[i]),
        ),
      ),
    );
    const live = replies.flat().find((reply) => reply.code === 'duplicate');
    if (live) throw duplicate(live.fields.key);
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

  /** One call per partition and per `perCall` keys, so no single call holds Redis for long. */
  private scheduleCalls(keys: string[], perCall = SCHEDULE_BATCH): ScheduleCall[] {
    const byPartition = new Map<number, number[]>();
    keys.forEach((key, index) => {
      const partition = this.keys.partitionOf(key);
      const indexes = byPartition.get(partition);
      if (indexes) indexes.push(index);
      else byPartition.set(partition, [index]);
    });
    return [...byPartition].flatMap(([partition, indexes]) =>
      Array.from({ length: Math.ceil(indexes.length / perCall) }, (_, n) => ({
        partition,
        indexes: indexes.slice(n * perCall, (n + 1) * perCall),
      })),
    );
  }

  /** schedule.lua with guard keys and no spec: replies 'duplicate' when one of them is live (a read). */
  private guard(partition: number, keys: string[]): Promise<RowReply[]> {
    const argv1 = fencedArgv1(this.keys.partitions, this.keys.prefix);
    return this.scheduleScript(partition, argv1, '', keys, NO_SPECS);
  }

  /**
   * What the cancel did (a live timer cancelled, a kept finished row removed, no row); `again`: by the first
   * call of a caller's repeated request, whose kept answer (`q:<id>`, includes/requests.lua) this one
   * replays, so it is not counted twice.
   */
  async cancel(key: string, requests: CallRequests): Promise<{ outcome: CancelOutcome; again: boolean }> {
    const again = requests.repeated && (await this.kept(this.keys.partitionOf(key), requests, 'c'));
    const argv1 = this.argv1(requests('c'));
    const reply = await this.run('cancel', this.partitionBase(key), argv1, this.tombstoneMs, key);
    return { outcome: parseCancelReply(reply), again };
  }

  /** Whether the call `part` of a caller's retry has its first answer kept (`q:<id>`): it replays it. */
  private async kept(partition: number, requests: CallRequests, part: string): Promise<boolean> {
    return (await this.redis.exists(`${this.keys.base(partition)}q:${requests(part).id}`)) === 1;
  }

  /**
   * Cancels a scope in one partition, CANCEL_ALL_IN_FLIGHT batches sent at a time (each call takes the
   * first keys still indexed, so they never overlap) until a round's last call says nothing is left.
   * `fresh`: the cancels of the calls that ran now, not answered again for a caller's repeated request
   * (includes/requests.lua), so each cancel is counted once; `repeated`: every call was answered again.
   */
  async cancelAll(
    partition: number,
    scope: string,
    reason: string,
    requests: CallRequests,
  ): Promise<{ cancelled: number; fresh: number; repeated: boolean; at: number }> {
    const base = this.keys.base(partition);
    let [cancelled, fresh, repeated, at] = [0, 0, true, 0];
    for (let more = true, rounds = 0; more; rounds++) {
      const round = await Promise.all(
        Array.from({ length: CANCEL_ALL_IN_FLIGHT }, async (_, slot) => {
          const argv1 = this.argv1(requests(`${partition}.${rounds}.${slot}`));
          const args = [this.tombstoneMs, scope, this.cancelBatch, reason];
          return (await this.run('cancel-all', base, argv1, ...args)) as [number, number, string, 1?];
        }),
      );
      for (const [count, , now, again] of round) {
        cancelled += count;
        if (again !== 1) [fresh, repeated] = [fresh + count, false];
        at = Math.max(at, Number(now));
      }
      more = round[round.length - 1][1] === 1;
    }
    return { cancelled, fresh, repeated, at };
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

  /** A cron resumes at its next occurrence after Redis now, computed here (resume.lua asks again if late). */
  async resume(key: string, requests: CallRequests): Promise<RowReply> {
    const [cron, tz] = await this.redis.hmget(this.keys.row(key), 'cr', 'tz');
    const [reply] = await this.withRedisNow(async (now) => [
      await this.onKey('resume', requests, key, cron && tz ? liveCronSlot(cron, tz, now) : ''),
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
    ownResends = false,
  ): Promise<RowReply[]> {
    const base = this.keys.base(partition);
    const flags = [distinct ? '1' : '', plain ? '1' : '', ownResends ? '1' : ''];
    const args = [this.tombstoneMs, first, JSON.stringify(guards), JSON.stringify(specs), ...flags];
    const raw = await this.run('schedule', base, argv1, ...args);
    return parseScheduleReply(raw as RawScheduleReply, partition, plain ? specs : undefined);
  }

  private onKey(
    script: ScriptName,
    requests: CallRequests,
    key: string,
    ...args: (string | number)[]
  ): Promise<RowReply> {
    const argv1 = this.argv1(requests('w'));
    return this.run(script, this.partitionBase(key), argv1, key, ...args).then((raw) =>
      parseRowReply(raw as string[] | string),
    );
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

/** The ifExists 'error' keys of the calls other than `n`: its guards. */
function guardKeys(specs: NormalizedSpec[], calls: ScheduleCall[], n: number): string[] {
  const keys: string[] = [];
  calls.forEach(({ indexes }, m) => {
    if (m === n) return;
    for (const i of indexes) if (specs[i].ifExists === 'error') keys.push(specs[i].key);
  });
  return keys;
}

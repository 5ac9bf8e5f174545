import {
  type EndedStatus,
  keyEndedFix,
  keyNotFoundFix,
  type KeyFixWays,
  NO_HISTORY,
} from './browser/key-fix';
import { closestName } from './closest-name';
import { SundialError } from './errors';
import { repartitionRefusals } from './repartition-refusals';
import { redisRefusals } from './redis-refusals';
import { showValue } from './show-value';

/**
 * The wording of Sundial's refusals (docs/spec.md §2), in one place: each says what went wrong (`reason`,
 * `field`, `message`) and what to write instead (`fix`). Used by the engine, the Redis store, the
 * worker and the HTTP API.
 */
/** Where a handler of the in-memory engine comes from: a Nest app's methods, or createEngine's option. */
export const registerHandler = (name: string): string =>
  `an @OnTimer('${name}') method in a Nest app, or createEngine({ handlers })`;

/** A not-found key's ways in-process: the TimersApi's calls (HTTP, the CLI and the UI name their own). */
/** The writes a running or paused timer refuses (`inactive`, docs/spec.md §3.4, §3.3c). */
export type InactiveOperation = 'reschedule' | 'pause' | 'trigger' | 'backfill';

const CALLS: KeyFixWays = {
  list: (scope) => (scope === '' ? 'list()' : `list({ prefix: ${JSON.stringify(scope)} })`),
  history: (key) => `history(${key === undefined ? 'key' : JSON.stringify(key)})`,
  kept: 'removeOnComplete: false',
  create: 'schedule(spec)',
};

export const refusals = {
  duplicateKey: (key: string) =>
    new SundialError({
      reason: 'duplicate-key',
      field: 'key',
      message: `A live timer already exists under key ${JSON.stringify(key)}.`,
      fix: "Pass ifExists: 'replace' to supersede it, ifExists: 'keep' to get it back, or cancel it first.",
    }),
  notFound: (key: string) =>
    new SundialError({
      reason: 'not-found',
      field: 'key',
      message: `No live timer under key ${JSON.stringify(key)}.`,
      fix: keyNotFoundFix(key, CALLS),
    }),
  /**
   * A write (pause, resume, trigger, reschedule, backfill) on a kept timer that ended: no live timer, as
   * `notFound` (404), and `detail.status` says it ended and how, so a caller need not read the key again.
   */
  ended: (key: string, status: EndedStatus, operation: InactiveOperation | 'resume') =>
    new SundialError({
      reason: 'not-found',
      field: 'key',
      message: `Cannot ${operation} timer ${JSON.stringify(key)}: it has ended (${status}); its row is kept, but no live timer is there to ${operation}.`,
      fix: keyEndedFix(key, CALLS),
      detail: { status },
    }),
  /**
   * `history` of a key with no timer, no tombstone and no ledger: not "no live timer", which would hide
   * that a history outlives its timer.
   */
  noHistory: (key: string) =>
    new SundialError({
      reason: 'not-found',
      field: 'key',
      message: `No timer and no history under key ${JSON.stringify(key)} (a ledger is kept 7 days after its timer ended).`,
      fix: keyNotFoundFix(key, CALLS, NO_HISTORY),
      detail: { code: NO_HISTORY },
    }),
  /**
   * A running (or backfilling) or paused timer refuses `operation`: one text on every backend. Only a
   * reschedule has a way past a run (a replace); pause, trigger and backfill wait for it to end.
   */
  inactive: (key: string, status: 'running' | 'paused', operation: InactiveOperation) =>
    new SundialError({
      reason: 'inactive',
      field: 'key',
      message: `Cannot ${operation} timer ${JSON.stringify(key)} while it is ${status}.`,
      fix:
        status === 'paused'
          ? 'Resume it first.'
          : operation === 'reschedule'
            ? "Wait for the run to end, or schedule the key again with ifExists: 'replace' to supersede it."
            : 'Wait for the run to end; listen for its completed or failed event.',
      detail: { status },
    }),
  /** `field` undefined: the value as a whole (e.g. a spec that is not an object) */
  invalid: (field: string | undefined, message: string, fix: string) =>
    new SundialError({ reason: 'invalid', ...(field !== undefined && { field }), message, fix }),
  /**
   * An HTTP query parameter the route does not take (a typo such as `prefx` must not widen a list or
   * a cancelAll, and `?force=1` on a route without a query must not seem to do something): `field`
   * names it, the fix lists what the route takes, or says it takes none (and, for a route with a body,
   * that its settings go there: `POST /v1/timers?ifExists=replace`).
   */
  unknownQueryParameter: (name: string, route: string, known: readonly string[], withBody = false) => {
    const guess = closestName(name, known);
    return new SundialError({
      reason: 'invalid',
      field: name,
      message: `${route} takes no query parameter ${JSON.stringify(name)}.`,
      fix:
        known.length === 0
          ? `Remove ${JSON.stringify(name)} from the query: ${route} takes no query parameters${withBody ? ' (its settings go in the JSON body)' : ''}.`
          : `${guess ? `Did you mean ${guess}? ` : ''}${route} takes ${known.join(', ')}.`,
    });
  },
  /** An HTTP query parameter given more than once (`?prefix=a&prefix=b`): no value is picked for the caller. */
  repeatedQueryParameter: (name: string, route: string, values: unknown) =>
    new SundialError({
      reason: 'invalid',
      field: name,
      message: `${route} takes ${name} once; the query gives it ${Array.isArray(values) ? values.length : 'more than one'} times.`,
      fix: `Send ${name} once, with the one value meant (one request per value).`,
    }),
  /** A body on an HTTP route that takes none: ignored, it would seem to have done something. */
  unexpectedBody: (route: string) =>
    new SundialError({
      reason: 'invalid',
      field: 'body',
      message: `${route} takes no body, and the request had one.`,
      fix: 'Send the request without a body (or with {}): this route reads nothing from it.',
    }),
  /**
   * A process's `serve` list (SUNDIAL_SERVE_PARTITIONS) that is empty, names a partition twice, names
   * one that does not exist, or cannot be read; `field` names where it came from.
   */
  invalidServe: (field: string, partitions: number, problem: string) =>
    new SundialError({
      reason: 'invalid',
      field,
      message: `${field} ${problem}; the partitions are 0 to ${partitions - 1}.`,
      fix: `List partitions from 0 to ${partitions - 1}, each once, as numbers and ranges (e.g. "0,2,5-7"), or leave ${field} unset to serve them all.`,
    }),
  disposed: (what: 'engine' | 'client') =>
    new SundialError({
      reason: 'disposed',
      message: `This Sundial ${what} was disposed.`,
      fix:
        what === 'engine'
          ? 'Create a new engine with createEngine(); a disposed one takes no more calls.'
          : 'Create a new client; a disposed one takes no more calls.',
    }),
  /** A start (the apps, `SundialModule`, `SundialWorkerModule`) that waited for Redis in vain. */
  startWait: (waitedMs: number, why: string) =>
    new SundialError({
      reason: 'unavailable',
      field: 'connection',
      message: `Redis did not answer within ${waitedMs} ms at start: ${why}`,
      fix: "Check that Redis is up and reachable at the connection's address (the apps' REDIS_URL; the connection option of SundialModule, RedisTimers, Dispatcher or TimerRunner) and that its credentials are right; their startWaitMs option sets how long a start waits (default 30000).",
    }),
  /**
   * A start (`start()`, `connect()`) whose connection was closed (`close()`, `dispose()`) before it was
   * done: it stops at once rather than waiting for a Redis that closed connection never reaches.
   */
  closedWhileStarting: () =>
    new SundialError({
      reason: 'disposed',
      message: 'Closed while starting: close() (or dispose()) was called before the start was done.',
      fix: 'Nothing to fix when the process is shutting down; otherwise close it only after start() (or connect()) has settled.',
    }),
  /** SundialWorkerModule in an app where no SundialModule is visible to it (none, or one not global). */
  workerWithoutSundialModule: () =>
    new SundialError({
      reason: 'invalid',
      field: 'imports',
      message:
        'SundialWorkerModule runs the timers of SundialModule, but no SundialModule.forRoot or forRootAsync is visible to it.',
      fix: 'Import SundialModule.forRoot({ connection }) or forRootAsync(…) beside SundialWorkerModule.forRoot(…); it is global unless isGlobal: false, which makes it visible only in the module that imports it.',
    }),
  /**
   * SundialWorkerModule's `configKey`: a BullModule connection that reaches another Redis or database than
   * SundialModule's, where the fire jobs are added, so its workers would take none.
   */
  configKeyElsewhere: (configKey: string) =>
    new SundialError({
      reason: 'invalid',
      field: 'configKey',
      message: `BullModule.forRoot('${configKey}') connects the fire queues' workers to another Redis or database than SundialModule's connection, where the fire jobs are added: they would take none.`,
      fix: `Give BullModule.forRoot('${configKey}', …) the Redis and database of SundialModule's connection, or drop configKey (the fire queues then use SundialModule's connection).`,
    }),
  /** The same requestId with another operation or other arguments (docs/spec.md §2). */
  idempotencyConflict: (requestId: string, field = 'requestId') =>
    new SundialError({
      reason: 'idempotency-conflict',
      field,
      message: `Request id ${JSON.stringify(requestId)} was already used for another operation or other arguments.`,
      fix: 'Send a retry with exactly the same arguments, or use a new request id for a new request.',
    }),
  /**
   * A run whose timer names a handler this engine or worker does not have; `known`, the handlers it has:
   * the closest is named (a typo in `handler` reaches a worker: the Redis client cannot check it at schedule).
   */
  unknownHandler: (name: string, where: 'engine' | 'worker', known: readonly string[] = []) => {
    const guess = closestName(name, known);
    const instead = guess
      ? `Replace the timer with one whose handler is "${guess}", or register "${name}"`
      : '';
    return new SundialError({
      reason: 'unknown-handler',
      field: 'handler',
      message: `no handler named "${name}" is registered with this ${where}${guess ? ` (did you mean "${guess}"?)` : ''}`,
      fix:
        where === 'engine'
          ? guess
            ? `${instead}: ${registerHandler(name)}.`
            : `Register a handler named "${name}" (${registerHandler(name)}), or replace the timer with one whose handler is registered.`
          : `${guess ? instead : `Register "${name}"`} on the worker — an @OnTimer('${name}') method of an app running SundialWorkerModule, the stock worker's built-ins (http, log), the \`handlers\` export of the module SUNDIAL_HANDLERS_MODULE names, or TimerRunner's \`handlers\` option${guess ? '' : ' — or replace the timer with one whose handler is registered'}.`,
    });
  },
  /** A slot policy (catchup, catchupWindow, jitter, startAt, endAt: docs/spec.md §3.3c) on a one-shot timer. */
  periodicOnly: (field: string, value: string) =>
    new SundialError({
      reason: 'invalid',
      field,
      message: `${field} ${value} was given for a one-shot timer (delay/at); it only applies to every and cron`,
      fix: `Remove ${field}, or use every or cron for a timer that repeats.`,
    }),
  /** catchup 'all' on an awaitTask: false interval, whose ticks never wait for a run to end. */
  catchupAllFree: () =>
    new SundialError({
      reason: 'invalid',
      field: 'catchup',
      message:
        "catchup 'all' was given with awaitTask false (or overlap 'allow' or 'cancel-other'): its slots are armed at claim, so missed slots cannot run one after another",
      fix: "Use catchup 'skip' or 'once' with it, or remove awaitTask: false (and overlap 'allow' / 'cancel-other') to catch up with 'all'.",
    }),
  /** A slot policy duration that is not positive, too long, or (jitter) not shorter than the interval. */
  badPolicyDuration: (field: string, value: string, bound: string) =>
    new SundialError({
      reason: 'invalid',
      field,
      message: `${field} ${value} is not a positive duration ${bound}`,
      fix: `Write ${field} as a positive duration ${bound}, e.g. ${field === 'jitter' ? '"30s"' : '"6h"'}.`,
    }),
  /** A cron's jitter not shorter than the shortest gap between its slots (`gap` in words, `bound` a Duration). */
  jitterNotShorterThanCron: (value: string, gap: string, where: string, bound: string) =>
    new SundialError({
      reason: 'invalid',
      field: 'jitter',
      message: `jitter ${value} is not shorter than the ${gap} between this cron's slots ${where}`,
      fix: `Write jitter shorter than ${bound}, or a cron whose slots are further apart than the jitter.`,
    }),
  /** endAt not after startAt, or no slot of the schedule falls before endAt. */
  endsBeforeStart: (detail: string) =>
    new SundialError({
      reason: 'invalid',
      field: 'endAt',
      message: `endAt ${detail}, so the timer would never run`,
      fix: 'Write an endAt after startAt and after the first slot of the schedule, or remove endAt.',
    }),
  /** backfill(key, { from, to }) on a range it cannot run. */
  badBackfillRange: (field: 'from' | 'to' | 'range', message: string, fix: string) =>
    new SundialError({ reason: 'invalid', field, message, fix }),
  /** An id that is not `<seq>p<partition>` (HTTP `GET /v1/registry/:id`; `check(id)` answers false). */
  malformedId: (id: string) =>
    refusals.invalid(
      'id',
      `id ${showValue(id)} is not a timer id`,
      'Pass the id a write returned (its "id" field): <seq>p<partition>, digits without leading zeros, e.g. "42p3". To look a timer up by its key, GET /v1/timers/:key.',
    ),
  /** backfill on a one-shot timer: it has no slots. */
  backfillNotPeriodic: (key: string) =>
    new SundialError({
      reason: 'invalid',
      field: 'key',
      message: `Timer ${JSON.stringify(key)} runs once (delay/at): it has no slots to backfill.`,
      fix: 'Backfill an every or cron timer, or use trigger(key) to run a one-shot timer now.',
      detail: { code: 'one-shot' },
    }),
  /** A process (or client) whose partition count is not the one the timers under `prefix` have. */
  partitionCount: (prefix: string, stored: number, mine: number) =>
    refusals.invalid(
      'partitions',
      `The timers under prefix '${prefix}' are spread over ${stored} partitions, and this process was started with ${mine}: it would not find their rows.`,
      `Start every process with SUNDIAL_PARTITIONS=${stored} (option partitions: ${stored}). To change the count, repartition: \`npx sundial repartition --to <count>\` while the processes run, then restart them with the new count (docs/operations.md "Changing the partition count").`,
    ),
  /** A process's (or client's) `partitions` option that is not a whole count from 1 to `max`. */
  partitionsOption: (partitions: unknown, max: number) =>
    refusals.invalid(
      'partitions',
      `partitions ${showValue(partitions)} is not a whole number of partitions from 1 to ${max}.`,
      `Pass partitions as an integer from 1 to ${max} (SUNDIAL_PARTITIONS for the apps), the same in every process; leave it out for 1.`,
    ),
  /** A process started with another count than the target of the repartition under way. */
  repartitionUnderway: (prefix: string, from: number, to: number, mine: number, preparing: boolean) =>
    refusals.invalid(
      'partitions',
      `The timers under prefix '${prefix}' are being repartitioned from ${from} to ${to} partitions${preparing ? ' (preparing)' : ''}, and this process was started with ${mine}.`,
      preparing && mine === to
        ? 'Start it again in a moment: the repartition is about to let processes with the new count in.'
        : `Start it with SUNDIAL_PARTITIONS=${to} (option partitions: ${to}): processes with the new count work during the repartition.`,
    ),
  /** A process on a Redis older than 7.0: the hot scripts run as Redis Functions (FCALL). */
  redisVersion: (node: string, version: string) =>
    refusals.invalid(
      'connection',
      `Redis at ${node} is version ${version}; Sundial needs Redis 7.0 or later (its hot scripts run as Redis Functions).`,
      'Upgrade Redis to 7.0 or later (every node of a Cluster), then start the process again.',
    ),
  /** A process (dispatcher, worker, client) whose ACL user may not load Sundial's Redis Functions. */
  functionLoadRefused: (node: string, reply: string) =>
    refusals.invalid(
      'connection',
      `Redis at ${node} refused to load Sundial's Redis Functions: ${reply}`,
      'Grant the ACL user +fcall +function|load (docs/operations.md "A least-privilege ACL user"), then start the process again.',
    ),
  /** A store write from a process whose count a repartition has replaced (the layout fence refused it). */
  partitionsMoved: (prefix: string, allowed: number, mine: number) =>
    new SundialError({
      reason: 'unavailable',
      field: 'partitions',
      message: `The timers under prefix '${prefix}' were repartitioned to ${allowed} partitions; this process still spreads keys over ${mine}, so the write was refused and changed nothing.`,
      fix: `Restart this process with SUNDIAL_PARTITIONS=${allowed} (option partitions: ${allowed}); meanwhile retry the call on a process that has it.`,
    }),
  /** A write that waited too long for a repartition: its key's run went on, or (cancelAll) the repartition did. */
  repartitionWait: (what: string, waitedMs: number) =>
    new SundialError({
      reason: 'unavailable',
      message: `A repartition is moving the timers: ${what} did not settle within ${waitedMs} ms; the call changed nothing.`,
      fix: 'Retry in a moment (a key moves as soon as its run in progress ends; cancelAll waits for the whole repartition).',
    }),
  ...repartitionRefusals,
  ...redisRefusals,
};

import { realClock, type Clock } from '../clock';
import { refusals } from '../refusals';
import { noteRequestCall } from '../replays';
import { DEFAULT_REQUEST_WINDOW_MS, heldForNextStep, requestPins, validateRequestId } from '../request-id';
import type { Timer, TimersBackend, TimerSpec, WriteOptions } from '../types';
import { checkArguments } from './argument-checks';
import type { EngineOptions } from './engine';

/** The in-memory engine (docs/spec.md §5.1a): the Timers operations in one process, no Redis or Nest. */
export type Engine = TimersBackend;

/**
 * What the engine implements under rememberRequests: `cancel` is its `cancelOutcome`, told as a boolean;
 * `schedule` is told whether its `unlessAnswered` request was answered (`taken`: refused duplicate-key).
 */
export type EngineOperations = Omit<Engine, 'cancel' | 'schedule' | 'scheduleMany'> & {
  schedule(spec: TimerSpec<unknown>, options?: WriteOptions, taken?: boolean): Promise<Timer>;
  scheduleMany(specs: TimerSpec<unknown>[], options?: WriteOptions): Promise<Timer[]>;
};

interface Remembered {
  fingerprint: string;
  /** the key of a `schedule` request, which a later schedule's `unlessAnswered` may name */
  scheduled?: unknown;
  /**
   * the first call's result (a refusal, or a cancel of nothing, is forgotten: it changed nothing, so it is
   * asked again); none for a `partOf` request's pin, which answers nothing
   */
  result?: Promise<unknown>;
  /** a `partOf` request's pin its refused step kept for its next one (`heldForNextStep`): that id's call takes it */
  heldFor?: string;
  until: number;
}

/**
 * The in-memory engine's `requestId` (docs/design.md "Repeated calls"), around its operations: a write
 * repeated with the same id and arguments within the window returns the first result and does nothing
 * more; with other arguments it is refused `idempotency-conflict`. A `partOf` request's id is pinned
 * too, first, as on Redis (client/write-requests.ts), and let go with the call that pinned it when
 * that call is not remembered.
 */
export function rememberRequests(
  api: EngineOperations,
  {
    clock = realClock,
    requestWindowMs = DEFAULT_REQUEST_WINDOW_MS,
    handlers,
    limits = {},
  }: { clock?: Clock; requestWindowMs?: number } & Pick<EngineOptions, 'handlers' | 'limits'>,
): Engine {
  const specDeps = { clock, handlers, limits };
  const memory = new Map<string, Remembered>();

  const remembered = async <T>(
    operation: string,
    args: unknown[],
    options: WriteOptions | undefined,
    run: () => Promise<T>,
    changed: (result: T) => boolean = () => true,
  ): Promise<T> => {
    if (options?.requestId === undefined && options?.partOf === undefined) return run();
    // the arguments on their own before the request ids, as on Redis (docs/spec.md §2 "Refusal order")
    const check = () => checkArguments(specDeps, operation, args, options.ownedRow === true);
    const pins = checkedFirst(() => requestPins(operation, args, options), check);
    const now = clock.now();
    // Entries are kept in the order they expire (one window each): drop the expired ones in front.
    for (const [key, entry] of memory) {
      if (entry.until > now) break;
      memory.delete(key);
    }
    // Pinned one after the other, as Redis's SET NX GET each: a conflict lets go of the pins made before.
    const made = new Map<string, Remembered>();
    for (const pin of pins) {
      const seen = memory.get(pin.id);
      if (seen && seen.fingerprint !== pin.fingerprint) {
        for (const [id, entry] of made) if (memory.get(id) === entry) memory.delete(id);
        check();
        throw refusals.idempotencyConflict(pin.id, pin.field);
      }
      if (seen) {
        // the next step of the request whose pin its first step kept: the pin is this call's now
        if (seen.heldFor !== undefined && seen.heldFor === options.requestId) {
          delete seen.heldFor;
          made.set(pin.id, seen);
        }
        continue;
      }
      const entry: Remembered = { fingerprint: pin.fingerprint, until: now + requestWindowMs };
      memory.set(pin.id, entry);
      made.set(pin.id, entry);
    }
    const own = options.requestId === undefined ? undefined : memory.get(options.requestId);
    // a retry (or a twin sent at once) answers as the first call; a pin only, as on Redis, runs
    let result = own?.result as Promise<T> | undefined;
    if (own) noteRequestCall(result !== undefined); // the HTTP API's Idempotent-Replayed (watchReplay)
    if (result === undefined) {
      result = run();
      if (own) {
        own.result = result;
        if (operation === 'schedule') own.scheduled = (args[0] as TimerSpec | undefined)?.key;
      }
    }
    // A refusal, or an answer that changed nothing (a cancel of nothing), is not remembered, as on Redis
    // (client/write-requests.ts): its retry runs again, and cancels the key scheduled meanwhile.
    // PUT's create refused duplicate-key keeps its request's pin for the replace (heldForNextStep).
    const forget = (error?: unknown): void => {
      const next = heldForNextStep(operation, options, error);
      for (const [id, entry] of made) {
        if (memory.get(id) !== entry) continue;
        if (next !== undefined && id === options.partOf?.requestId) entry.heldFor = next;
        else memory.delete(id);
      }
    };
    result.then((answer) => changed(answer) || forget(), forget);
    return result;
  };

  // Whether the request `id` (a schedule's `unlessAnswered`) was answered: its write changed what it
  // answered, and is remembered. One still running is waited for (a twin sent at once, as on Redis, where
  // the scripts run one at a time); the call's own id is not another request.
  // Only a `schedule` request of the same key counts (docs/spec.md §5.1), as on Redis, where the answer
  // looked for is that request's call in the key's partition: another operation's id is not answered.
  const answered = async (
    id: string | undefined,
    own: string | undefined,
    key: unknown,
  ): Promise<boolean> => {
    if (id === undefined || validateRequestId(id, 'unlessAnswered') === own) return false;
    const entry = memory.get(id);
    if (!entry?.result || entry.until <= clock.now() || entry.scheduled !== key) return false;
    await entry.result.catch(() => undefined);
    return memory.get(id) === entry;
  };

  // cancel and cancelOutcome are one write: the same request id answers either as the first call
  const cancelOutcome: Engine['cancelOutcome'] = (key, options) =>
    remembered(
      'cancel',
      [key],
      options,
      () => api.cancelOutcome(key),
      (done) => done !== null,
    );

  return {
    // Passed on for `ownedRow` (the owner mark, ../owner-mark); the engine does not read `requestId`.
    // Without unlessAnswered, called at once as the other writes (no await: the engine's order of
    // operations is what its callers see)
    schedule: (spec, options) =>
      remembered('schedule', [spec], options, () =>
        options?.unlessAnswered === undefined
          ? api.schedule(spec, options)
          : answered(options.unlessAnswered, options.requestId, spec?.key).then((taken) =>
              api.schedule(spec, options, taken),
            ),
      ),
    scheduleMany: (specs: TimerSpec<unknown>[], options?: WriteOptions) =>
      remembered('scheduleMany', [specs], options, () => api.scheduleMany(specs, options)),
    cancelOutcome,
    cancel: async (key, options) => (await cancelOutcome(key, options)) === 'cancelled',
    cancelAll: (scope, options) =>
      remembered('cancelAll', [scope ?? ''], options, () => api.cancelAll(scope)),
    reschedule: (key, when, options) =>
      remembered('reschedule', [key, when], options, () => api.reschedule(key, when)),
    pause: (key, options) => remembered('pause', [key], options, () => api.pause(key)),
    resume: (key, options) => remembered('resume', [key], options, () => api.resume(key)),
    trigger: (key, options) => remembered('trigger', [key], options, () => api.trigger(key)),
    backfill: (key, range, options) =>
      remembered('backfill', [key, range], options, () => api.backfill(key, range)),
    get: (key) => api.get(key),
    list: (options) => api.list(options),
    check: (id) => api.check(id),
    snapshot: () => api.snapshot(),
    history: (key, options) => api.history(key, options),
    next: (key, options) => api.next(key, options),
    preview: (spec, options) => api.preview(spec, options),
    describe: (key, options) => api.describe(key, options),
    on: (event, listener) => api.on(event, listener),
    dispose: () => api.dispose(),
  };
}

/** `validate`'s answer; when it refuses, `check`'s refusal (the call's own arguments) comes first. */
function checkedFirst<T>(validate: () => T, check: () => void): T {
  try {
    return validate();
  } catch (error) {
    check();
    throw error;
  }
}

/** Options of every state-changing call (docs/spec.md §5.1). */
export interface WriteOptions {
  /**
   * Makes a retry safe (HTTP: the `Idempotency-Key` header): a call repeated with the same id and the
   * same arguments within the window (24 h by default) returns the first call's result and changes
   * nothing more; with other arguments it is refused `idempotency-conflict`. A refused call is not
   * remembered: its retry runs again.
   */
  requestId?: string;
  /**
   * `schedule`/`scheduleMany` only: the write of a declarative source (`ensureOwnedRow`: the schedules
   * file, `@DistributedCron`), the one write whose `meta` may carry `sundialOwner` (docs/spec.md §5.1).
   * The HTTP API never sets it.
   */
  ownedRow?: boolean;
  /**
   * `schedule` only: another `requestId` of the same caller that takes this key (the HTTP API's PUT sets
   * its replace step's). When that request was answered within the window, this call is refused
   * `duplicate-key`, changing nothing, whatever the key holds now: a retry answers as its first try.
   */
  unlessAnswered?: string;
  /**
   * The caller's request this call is one step of, when that request is made of several calls each
   * under its own `requestId` (the HTTP API's PUT: a create, then on `duplicate-key` a replace, §5.2).
   */
  partOf?: WholeRequest;
}

/**
 * A caller's request made of several calls (`WriteOptions.partOf`). Its `requestId` is pinned to
 * `operation` and `args` for the window, as a call's `requestId` is to the call (docs/spec.md §5.1): by
 * whichever of its calls comes first, and let go with a call of it that is refused (or changes nothing),
 * as that call's own id is — but a `schedule` naming its next step (`unlessAnswered`) refused
 * `duplicate-key` keeps it for that step, which takes it as its own (PUT's create, then its replace: the
 * id is never free between them). It is no call's `requestId` and answers nothing: the same id used by any call
 * as its `requestId`, or by another request's `partOf`, is refused `idempotency-conflict` on the call
 * that comes second (field `requestId`, or `partOf.requestId` when that is the id it shares), which
 * changes nothing.
 */
export interface WholeRequest {
  /** 1 to 255 printable ASCII characters without spaces, as a `requestId` */
  requestId: string;
  /** what the request is (the HTTP API: `PUT /v1/timers/:key`) */
  operation: string;
  /** what it asked for (objects compare as their fields, whatever their order) */
  args: unknown[];
}

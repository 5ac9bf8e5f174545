import { SundialError } from './errors';

// Why a file of its own: what a call tells of Redis failing it (unreachable, refusing for now, full, cut off
// after its write was sent), each saying what became of the call. Spread into `refusals`.

// Not `instanceof Error`: a socket's error (ECONNREFUSED) is made by Node's own realm (another Error under jest).
const said = (cause: unknown) => {
  const message = (cause as Error | undefined)?.message;
  return typeof message === 'string' ? message : String(cause);
};

/** Redis's replies that mean "not now" (what each means for the caller), checked before the command ran. */
const NOT_NOW: [RegExp, string][] = [
  [
    /^READONLY\b/,
    'The connection reaches a replica, not the primary (after a failover, say): connect to the primary (a Sentinel or Cluster connection follows failovers), then retry.',
  ],
  [/^LOADING\b/, 'Redis is loading its data after a restart: retry in a moment.'],
  [
    /^BUSY\b/,
    'Redis is running a long script and answers nothing else until it ends: retry in a moment (SCRIPT KILL or FUNCTION KILL ends it).',
  ],
  [/^(MASTERDOWN|CLUSTERDOWN|TRYAGAIN)\b/, 'Redis is failing over or moving slots: retry in a moment.'],
];

export const redisRefusals = {
  /**
   * Redis could not be reached, or answered the call with a refusal for now: nothing of it ran. A write
   * Redis refused (OOM, READONLY, BUSY, …) ran nothing: Redis checks before a script's first write.
   */
  unavailable: (cause: unknown) => {
    const detail = said(cause);
    if (/^OOM\b/.test(detail)) {
      return new SundialError({
        reason: 'unavailable',
        message: `Redis is out of memory (${detail}); the call changed nothing.`,
        fix: 'Free memory in Redis or raise its maxmemory (keep maxmemory-policy noeviction), then retry.',
      });
    }
    const refused = NOT_NOW.find(([reply]) => reply.test(detail));
    if (refused) {
      return new SundialError({
        reason: 'unavailable',
        message: `Redis refused the call for now (${detail}); the call changed nothing.`,
        fix: refused[1],
      });
    }
    return new SundialError({
      reason: 'unavailable',
      message: `Redis is unreachable (${detail}); the call changed nothing.`,
      fix: 'Check that Redis is up and the connection settings (URL, credentials, TLS) are right, then retry: nothing of the call was applied, so a retry is safe.',
    });
  },
  /**
   * A write cut off from Redis after its request id's pin was sent and before anything that changes a
   * timer was (docs/spec.md §5.5): it changed no timer, so it says so, not `outcome-unknown`; Redis may
   * keep the pin, which only a call with other arguments under that id meets (`idempotency-conflict`).
   */
  unsentAfterPin: (cause: unknown) =>
    new SundialError({
      reason: 'unavailable',
      message:
        `Redis became unreachable (${said(cause)}) before this write was sent; the call changed no timer ` +
        '(its request id — requestId, or the Idempotency-Key header — may stay recorded for this very call).',
      fix: 'Check that Redis is up and the connection settings (URL, credentials, TLS) are right, then retry the same call: nothing of it was applied, so a retry is safe, with the same request id too.',
    }),
  /**
   * A write cut off from Redis after it was sent (issue 8): it may have been applied before the
   * connection failed, so the answer says so, and that a retry with the same requestId is safe.
   */
  outcomeUnknown: (cause: unknown) =>
    new SundialError({
      reason: 'unavailable',
      message: `Redis became unreachable (${said(cause)}) while this write was in flight: it may or may not have been applied.`,
      detail: { code: 'outcome-unknown' },
      // the call's own way: the HTTP API (its header), the CLI and the operator UI name theirs
      fix:
        'Retry with the same requestId option: a repeated call returns the first result and changes nothing ' +
        'more. Without one, check the timer with get(key) once Redis answers again (it may still run a write it had not run yet), before retrying.',
    }),
};

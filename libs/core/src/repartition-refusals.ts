import { SundialError } from './errors';

// Why a file of its own: the refusals of `repartition()` itself (the CLI's `sundial repartition`), apart
// from those a repartition under way gives other processes' calls (refusals.ts). Spread into `refusals`.

const invalid = (field: 'to' | 'connection', message: string, fix: string) =>
  new SundialError({ reason: 'invalid', field, message, fix });

export const repartitionRefusals = {
  /** `repartition({ to })` with a count that is not a positive integer (at most `max`). */
  repartitionTarget: (to: unknown, max: number) =>
    invalid(
      'to',
      `The partition count to repartition to must be an integer from 1 to ${max}, got ${JSON.stringify(to)}.`,
      'Pass e.g. --to 4 (option to: 4).',
    ),
  /** `repartition({ to })` with the count the timers already have. */
  repartitionSame: (prefix: string, count: number) =>
    invalid(
      'to',
      `The timers under prefix '${prefix}' are already spread over ${count} partitions.`,
      'Pass another count, or leave them as they are.',
    ),
  /** A second repartition while one to another count is under way. */
  repartitionBusy: (prefix: string, from: number, to: number) =>
    invalid(
      'to',
      `A repartition of prefix '${prefix}' from ${from} to ${to} partitions is under way.`,
      `Let it finish, or run it again with --to ${to} to resume it (after its process died).`,
    ),
  /** A repartition whose ACL user may not SCAN: checked before it writes anything. */
  repartitionScanRefused: (reply: string) =>
    invalid(
      'connection',
      `Redis refused SCAN to this user (${reply}); a repartition lists with it the keys a partition does not index. Nothing was changed.`,
      'Run the repartition as a user with the apps\' ACL rules plus +scan (docs/operations.md "Changing the partition count"), then run it again.',
    ),
  /** A repartition whose Redis refused its user or password: its first command, before it writes anything. */
  repartitionAuthRefused: (reply: string) =>
    invalid(
      'connection',
      `Redis refused this connection's credentials (${reply}). Nothing was changed.`,
      "Give the user and password of the apps' REDIS_URL (redis://user:password@host:port; --redis-url of sundial repartition), then run it again.",
    ),
  /** A repartition that Redis stopped answering after its first write: it may have changed something, and resumes. */
  repartitionCut: (cause: unknown, to: number) =>
    new SundialError({
      reason: 'unavailable',
      message: `Redis became unreachable (${cause instanceof Error ? cause.message : String(cause)}) part-way through the repartition to ${to} partitions, after its first write: it may have changed something (keys moved stay moved; a repartition under way stays so until it is run again).`,
      detail: { code: 'repartition-cut' },
      fix: `Run the same repartition (--to ${to}) again once Redis answers: it resumes where it stopped.`,
    }),
};

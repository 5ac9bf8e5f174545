import { AsyncLocalStorage } from 'node:async_hooks';
import { ReplyError } from 'ioredis';

/** ioredis's Command as far as this reads it. */
interface SentCommand {
  name: string;
  promise: Promise<unknown>;
}

/** The commands a client call sends that can change data: its scripts and functions, its request pins. */
const CHANGES_DATA = new Set(['fcall', 'evalsha', 'eval', 'set', 'del', 'unlink', 'exec']);

/**
 * Which of a `RedisTimers` write's commands that can change data reached Redis's socket (docs/spec.md §5.5): a
 * write cut off by an outage told its caller "may or may not have been applied" even when Redis was
 * already away before the call and nothing of it was sent (ioredis's offline queue rejected it with
 * `MaxRetriesPerRequestError`, a closed connection with `Connection is closed.`): the caller checked and
 * retried for nothing. A command Redis answered with an error (READONLY, OOM, BUSY) ran nothing: it is
 * left out again. A command Redis answered is kept: a call whose later command fails then did change
 * something (a `cancelAll` batch), so its outcome is unknown.
 */
export class SentWrites {
  private static readonly current = new AsyncLocalStorage<SentWrites>();
  /** each command's call, named when it is first sent (in the call's context) and read on each send after */
  private static readonly owners = new WeakMap<object, SentWrites>();
  private readonly commands = new Set<object>();

  /** Runs a call's `operation`, noting its commands that reach Redis. */
  run<T>(operation: () => Promise<T>): Promise<T> {
    return SentWrites.current.run(this, operation);
  }

  /** Whether a command of the call that can change data was written to Redis and not refused by it. */
  get any(): boolean {
    return this.commands.size > 0;
  }

  /** Ties `command` to the call being run, if any (once: a resend after a reconnect runs outside it). */
  static claim(command: object): void {
    const call = SentWrites.current.getStore();
    if (call && !SentWrites.owners.has(command)) SentWrites.owners.set(command, call);
  }

  /** `command` was written to Redis's socket (its first send, a resend, the offline queue's flush). */
  static written(command: SentCommand): void {
    const call = SentWrites.owners.get(command);
    if (!call || call.commands.has(command) || !CHANGES_DATA.has(command.name.toLowerCase())) return;
    call.commands.add(command);
    // Registered before the caller's own handlers: settled before the call reads `any`.
    command.promise.catch((error: unknown) => {
      if (error instanceof ReplyError) call.commands.delete(command);
    });
  }
}

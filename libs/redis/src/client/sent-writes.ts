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
  /** set while a call sends its request ids' pins (`pin`): what those commands are */
  private static readonly pinning = new AsyncLocalStorage<true>();
  /** each command's call, named when it is first sent (in the call's context) and read on each send after */
  private static readonly owners = new WeakMap<object, SentWrites>();
  private static readonly pinCommands = new WeakSet<object>();
  private readonly commands = new Set<object>();
  private readonly pins = new Set<object>();

  /** Runs a call's `operation`, noting its commands that reach Redis. */
  run<T>(operation: () => Promise<T>): Promise<T> {
    return SentWrites.current.run(this, operation);
  }

  /**
   * Whether a command of the call that can change a timer (a script, a function) was written to Redis and
   * not refused by it; its request ids' pins are not such commands (`pinned`).
   */
  get any(): boolean {
    return this.commands.size > 0;
  }

  /**
   * Whether a pin of the call's request ids (client/write-requests.ts) was written to Redis: one cut off
   * after that and before its script was sent changed no timer, yet Redis may keep the pin.
   */
  get pinned(): boolean {
    return this.pins.size > 0;
  }

  /** Sends a request id's pin: its command is told apart from those that change timers (`pinned`). */
  static pin<T>(send: () => Promise<T>): Promise<T> {
    return SentWrites.pinning.run(true, send);
  }

  /** Ties `command` to the call being run, if any (once: a resend after a reconnect runs outside it). */
  static claim(command: object): void {
    const call = SentWrites.current.getStore();
    if (!call || SentWrites.owners.has(command)) return;
    SentWrites.owners.set(command, call);
    if (SentWrites.pinning.getStore()) SentWrites.pinCommands.add(command);
  }

  /** `command` was written to Redis's socket (its first send, a resend, the offline queue's flush). */
  static written(command: SentCommand): void {
    const call = SentWrites.owners.get(command);
    if (!call || !CHANGES_DATA.has(command.name.toLowerCase())) return;
    const sent = SentWrites.pinCommands.has(command) ? call.pins : call.commands;
    if (sent.has(command)) return;
    sent.add(command);
    // Registered before the caller's own handlers: settled before the call reads `any`.
    command.promise.catch((error: unknown) => {
      if (error instanceof ReplyError) sent.delete(command);
    });
  }
}

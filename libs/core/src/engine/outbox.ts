/**
 * What an engine operation sets off in user code — listener calls and handler aborts — waits here
 * until the operation's own state changes are complete. A listener (or a handler's abort listener)
 * that calls back into the engine then sees the state as it is, never an operation half done: a
 * `cancelAll` whose `cancelled` listener calls `cancelAll` again cancels each timer once, and a
 * batch is placed whole before its first `scheduled` listener runs. Outside an operation (a wake,
 * a settling run) effects run at once.
 */
export class Outbox {
  private held: (() => void)[] | null = null;

  /** Runs `operation`, then the effects it set off, in order; nested holds join the outermost. */
  hold<T>(operation: () => T): T {
    if (this.held) return operation();
    const held: (() => void)[] = [];
    this.held = held;
    try {
      return operation();
    } finally {
      this.held = null;
      // A listener that calls the engine holds its own operation's effects, and they run before ours go on.
      for (const effect of held) effect();
    }
  }

  later(effect: () => void): void {
    if (this.held) this.held.push(effect);
    else effect();
  }
}

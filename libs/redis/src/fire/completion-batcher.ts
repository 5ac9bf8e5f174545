import type { Completion, FireCommands } from '../store/fire-commands';
import type { CompleteReply } from '../store/replies';

interface Waiting {
  completion: Completion;
  resolve(result: CompleteReply): void;
  reject(error: unknown): void;
}

/**
 * Sends the completions settled in the same event-loop turn as one complete.lua call per partition:
 * a burst of short runs costs a few round trips, not one each.
 */
export class CompletionBatcher {
  private waiting = new Map<number, Waiting[]>();
  private flushScheduled = false;

  constructor(private readonly commands: FireCommands) {}

  complete(partition: number, completion: Completion): Promise<CompleteReply> {
    return new Promise((resolve, reject) => {
      const list = this.waiting.get(partition) ?? [];
      this.waiting.set(partition, list);
      list.push({ completion, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    const batches = this.waiting;
    this.waiting = new Map();
    this.flushScheduled = false;
    for (const [partition, list] of batches) {
      this.commands
        .complete(
          partition,
          list.map((entry) => entry.completion),
        )
        .then(
          (results) => list.forEach((entry, i) => entry.resolve(results[i])),
          (error: unknown) => list.forEach((entry) => entry.reject(error)),
        );
    }
  }
}

import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { ChildConfig, ChildMessage, ParentMessage, RoleName, RunRecord } from './protocol';

const READY_DEADLINE_MS = 20_000;
const STOP_DEADLINE_MS = 10_000;

export interface FleetMember {
  role: RoleName;
  /** how many processes of this role */
  count: number;
}

/** The bench's child processes for one scenario run, and the handler starts they report. */
export class Fleet {
  /** every handler start reported so far, in arrival order */
  readonly runs: RunRecord[] = [];
  private waiters: Array<() => void> = [];

  private constructor(private readonly children: ChildProcess[]) {}

  static async start(
    redisUrl: string,
    members: FleetMember[],
    settings: Pick<ChildConfig, 'concurrency' | 'partitions' | 'claims'>,
  ): Promise<Fleet> {
    const configs: ChildConfig[] = members.flatMap(({ role, count }) =>
      Array.from({ length: count }, () => ({ role, redisUrl, ...settings })),
    );
    const entry = join(__dirname, '..', 'worker-process.js');
    const children = configs.map((config) => fork(entry, [JSON.stringify(config)], { stdio: 'inherit' }));
    const fleet = new Fleet(children);
    for (const child of children) child.on('message', (message: ChildMessage) => fleet.receive(message));
    try {
      await Promise.all(children.map((child) => awaitMessage(child, 'ready', READY_DEADLINE_MS)));
    } catch (error) {
      await fleet.stop();
      throw error;
    }
    return fleet;
  }

  /** Forgets the runs reported so far, so the next measurement starts from none. */
  clearRuns(): void {
    this.runs.length = 0;
  }

  /** Resolves true once `count` runs were reported, false if the deadline passed first. */
  async waitForRuns(count: number, deadlineMs: number): Promise<boolean> {
    while (this.runs.length < count) {
      const remaining = deadlineMs - Date.now();
      if (remaining <= 0) return false;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, remaining);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return true;
  }

  /** Stops every child gracefully (their last runs are reported first), killing any that hangs. */
  async stop(): Promise<void> {
    await Promise.all(
      this.children.map(async (child) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        const stopped = awaitMessage(child, 'stopped', STOP_DEADLINE_MS).catch(() => child.kill('SIGKILL'));
        if (child.connected) child.send({ type: 'stop' } satisfies ParentMessage);
        await stopped;
        const killer = setTimeout(() => child.kill('SIGKILL'), STOP_DEADLINE_MS);
        await exited;
        clearTimeout(killer);
      }),
    );
  }

  private receive(message: ChildMessage): void {
    if (message.type !== 'runs') return;
    for (const run of message.runs) this.runs.push(run);
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}

function awaitMessage(child: ChildProcess, type: ChildMessage['type'], timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => fail(new Error(`no '${type}' from bench child within ${timeoutMs} ms`)),
      timeoutMs,
    );
    const onMessage = (message: ChildMessage): void => {
      if (message.type !== type) return;
      cleanup();
      resolve();
    };
    const onExit = (code: number | null): void =>
      fail(new Error(`bench child exited (${code}) before '${type}'`));
    const fail = (error: Error): void => {
      cleanup();
      reject(error);
    };
    const cleanup = (): void => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

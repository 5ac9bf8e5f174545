import { type ChildProcess, spawn, type SpawnOptions, spawnSync } from 'node:child_process';
import { runInThisContext } from 'node:vm';

/**
 * The process this code really runs in. Under jest a test module's `process` is a copy whose listeners
 * never fire (no 'exit', no signals); code evaluated in the host context sees the real one.
 */
const host = runInThisContext('process') as NodeJS.Process;

/** Signals that end a process by default without an 'exit' event. */
const ENDING_SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/** Children still running, with what to clean up after them if this process ends first. */
const owned = new Map<ChildProcess, (() => void) | undefined>();

let deathSignalWorks: boolean | undefined;

/**
 * `spawn`, for a child that must not outlive this process (a test's redis-server or app): it is killed
 * when this process exits or gets SIGINT/SIGTERM/SIGHUP, then `atExit` runs. On Linux with util-linux's
 * `setpriv` the child is also started with a parent-death signal (PR_SET_PDEATHSIG, kept across its
 * exec), so the kernel kills it even when this process dies of SIGKILL or a crash, where no listener
 * runs. The child's pid is the command's own (setpriv execs it).
 */
export function spawnOwned(
  command: string,
  args: string[],
  options: SpawnOptions,
  atExit?: () => void,
): ChildProcess {
  deathSignalWorks ??= spawnSync('setpriv', ['--pdeathsig', 'KILL', 'true']).status === 0;
  const child = deathSignalWorks
    ? spawn('setpriv', ['--pdeathsig', 'KILL', command, ...args], options)
    : spawn(command, args, options);
  if (owned.size === 0) watchHost(true);
  owned.set(child, atExit);
  child.once('exit', () => disown(child));
  return child;
}

function disown(child: ChildProcess): void {
  owned.delete(child);
  // Listen only while something is owned: jest loads this module afresh for every suite of a worker.
  if (owned.size === 0) watchHost(false);
}

function watchHost(on: boolean): void {
  const method = on ? 'on' : 'off';
  host[method]('exit', killOwned);
  for (const signal of ENDING_SIGNALS) host[method](signal, onEndingSignal);
}

/** Synchronous, as an 'exit' listener must be: SIGKILL every child, then run its clean-up. */
function killOwned(): void {
  const children = [...owned];
  for (const [child] of children) {
    child.kill('SIGKILL');
    disown(child);
  }
  for (const [, atExit] of children) {
    try {
      atExit?.();
    } catch {
      // Best effort while exiting: what is left behind is temporary, and the other clean-ups must run.
    }
  }
}

function onEndingSignal(signal: NodeJS.Signals): void {
  killOwned();
  // When nobody else listens, end of the signal as the process would have without this listener.
  if (host.listenerCount(signal) === 0) host.kill(host.pid, signal);
}

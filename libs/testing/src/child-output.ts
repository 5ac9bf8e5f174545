import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

/** How a child process ended: its exit code, or the signal that ended it. */
export interface ChildEnd {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** What a child process wrote, line by line, and when it was over. */
export interface ChildOutput {
  /** every line it wrote, stdout and stderr (whichever are pipes), in the order they arrived */
  lines: string[];
  /** the lines it wrote on stdout alone */
  stdout: string[];
  /** resolves once it exited and its output ended: `lines` then holds every line it wrote */
  ended: Promise<ChildEnd>;
}

/**
 * Collects a child's lines. It waits for the child's 'close' and not its 'exit': Node may emit 'exit'
 * while the child's output is still in the pipe, and a test reading `lines` then would miss the last
 * ones (a refusal's message, a shutdown's last log line). 'close' comes after both streams ended, each
 * line pushed by then.
 */
export function childOutput(child: ChildProcess, onLine?: (line: string) => void): ChildOutput {
  const lines: string[] = [];
  const stdout: string[] = [];
  for (const stream of [child.stdout, child.stderr]) {
    if (!stream) continue;
    createInterface({ input: stream }).on('line', (line) => {
      lines.push(line);
      if (stream === child.stdout) stdout.push(line);
      onLine?.(line);
    });
  }
  const ended = new Promise<ChildEnd>((resolve) =>
    child.once('close', (code: number | null, signal: NodeJS.Signals | null) => resolve({ code, signal })),
  );
  return { lines, stdout, ended };
}

import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { childOutput } from './child-output';

describe('childOutput', () => {
  it('ends once the output ended, the last line in, even when the exit is seen first', async () => {
    // The last words lack a newline: readline hands them over only when stdout ends.
    const child = spawn(
      process.execPath,
      [
        '-e',
        "console.log('first'); console.error('to stderr'); process.stdout.write('last words'); process.exitCode = 3",
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const { lines, ended } = childOutput(child);
    // This process reads nothing until the child is gone: its exit and its output's end then wait together.
    untilZombie(child.pid!);
    expect(await ended).toEqual({ code: 3, signal: null });
    expect(lines.sort()).toEqual(['first', 'last words', 'to stderr']);
  });
});

/**
 * Blocks (the event loop stays where it is) until the child has exited and is not yet reaped: Linux's
 * /proc state Z. Node reaps it, and reads its pipes, only once this returns.
 */
function untilZombie(pid: number): void {
  const deadline = Date.now() + 10_000;
  while (readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z') {
    if (Date.now() > deadline) throw new Error(`child ${pid} did not exit within 10 s`);
  }
}

import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { type ChildOutput, childOutput, waitFor } from '@sundial/testing/harness';

/**
 * A process that ends as a jest worker does (jest-worker's own 'message' listener, removed on END),
 * with test/environment.js's report armed, and after END, when told to leak, keeps a listening socket open
 * (what a test that never closes its server leaves behind).
 */
const WORKER = `
const leak = process.argv[2] === 'leak';
const jestListener = (message) => {
  if (message[0] !== 2) return;
  process.removeListener('message', jestListener);
  if (leak) require('node:net').createServer().listen(0, '127.0.0.1');
};
process.on('message', jestListener);
require(process.argv[1]).reportWhatOutlivesTheEnd();
process.send('ready');
`;

function startWorker(mode: 'leak' | 'clean'): { child: ChildProcess; output: ChildOutput } {
  const child = spawn(process.execPath, ['-e', WORKER, join(__dirname, 'environment.js'), mode], {
    env: { ...process.env, JEST_WORKER_ID: '1' },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  return { child, output: childOutput(child) };
}

async function sendEnd(child: ChildProcess): Promise<void> {
  await new Promise<void>((ready) => child.once('message', () => ready()));
  child.send([2, false]);
}

describe('test environment (jest workers)', () => {
  it('names what keeps a worker up after its END', async () => {
    const { child, output } = startWorker('leak');
    try {
      await sendEnd(child);
      const report = await waitFor(
        () => output.lines.find((line) => line.includes('ms after its END, held by:')),
        { what: 'the report of what holds the worker' },
      );
      expect(report).toMatch(
        /^jest worker \d+ still running 500 ms after its END, held by: .*\bTCPServerWrap\b/,
      );
    } finally {
      child.kill('SIGKILL');
      await output.ended;
    }
  });

  it('lets a worker with nothing left exit at once, saying nothing', async () => {
    const { child, output } = startWorker('clean');
    try {
      await sendEnd(child);
      const ended = await Promise.race([
        output.ended,
        new Promise<'still running'>((resolve) => setTimeout(resolve, 10_000, 'still running').unref()),
      ]);
      expect(ended).toEqual({ code: 0, signal: null });
      expect(output.lines).toEqual([]);
    } finally {
      child.kill('SIGKILL');
    }
  });
});

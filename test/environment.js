/**
 * The suites' test environment: jest's node environment, plus a report of what keeps a jest worker
 * process alive after the run ended.
 *
 * Jest tells each worker to end (CHILD_MESSAGE_END) and, past `workerGracefulExitTimeout`, kills it and
 * says "A worker process has failed to exit gracefully". That wait times the process's exit too, and a
 * worker's exit frees its heap (360-570 MB after a project's suites under --experimental-vm-modules):
 * on 2 loaded cores that alone took 240-1500 ms after an event loop that had emptied within 7 ms
 * (docs/design.md "Jest workers' exit"). So jest's warning cannot tell a leak from a slow exit, and the
 * grace is longer than it (jest.config.js). What does tell them apart: a timer that does not keep the
 * process up fires only while something else does. A worker whose loop is still alive
 * REPORT_AFTER_MS after its END says so on stderr, naming what holds it (a timer, a socket, a child).
 */
const { join } = require('node:path');
const { useCodeCache } = require('./code-cache');

const END = 2; // jest-worker's CHILD_MESSAGE_END
const REPORT_AFTER_MS = 500;

/** Whether this process is a jest worker (jest-worker's child; not the jest process of an in-band run). */
function isJestWorker() {
  return require.main?.filename.endsWith(join('jest-worker', 'build', 'processChild.js')) ?? false;
}

/** On this process's END from jest, arms the report of what still holds it up 500 ms later. */
function reportWhatOutlivesTheEnd() {
  const onMessage = (message) => {
    if (!Array.isArray(message) || message[0] !== END) return;
    // Jest removes its own listener too: with none left, the channel no longer holds the process up.
    process.removeListener('message', onMessage);
    const report = setTimeout(() => {
      const held = process.getActiveResourcesInfo();
      process.stderr.write(
        `jest worker ${process.pid} still running ${REPORT_AFTER_MS} ms after its END, held by: ${held.join(', ')}\n`,
      );
    }, REPORT_AFTER_MS);
    report.unref();
  };
  process.on('message', onMessage);
}

// Loaded once per worker process (the environment module is required outside the tests' sandboxes).
if (isJestWorker()) reportWhatOutlivesTheEnd();
// V8's code cache for the modules the sandboxes compile (test/code-cache.js), beside Node's compile cache
useCodeCache(join(__dirname, '..', 'node_modules', '.cache', 'jest-code-cache'));

const { TestEnvironment } = require('jest-environment-node');

module.exports = { __esModule: true, default: TestEnvironment, TestEnvironment, reportWhatOutlivesTheEnd };

const Sequencer = require('@jest/test-sequencer').default;

/**
 * Projects in the order their suites should start when jest knows no durations yet (a clean clone, as
 * in CI): those whose suites wait tens of seconds on real time and child processes first, so no long
 * suite starts last while the other workers sit idle. The chaos project (one suite) leads: its worker
 * builds `dist` (ensureBuilt) at once while the other worker runs the conformance project, which needs
 * no `dist`. With conformance first, both workers took conformance suites and the first process suite
 * came only once they ran out: the other worker's next process suite then waited on the build's lock.
 */
const SLOW_FIRST = ['chaos', 'conformance', 'cluster', 'operator', 'deploy', 'api', 'redis', 'unit'];

/**
 * Jest's own order (failed first, then the longest by the durations of earlier runs, else the biggest
 * file) — except on a run with no recorded durations, where file size says little (the slowest suites
 * are among the smallest files): there the projects go in SLOW_FIRST order, biggest file first within one.
 */
class SlowProjectsFirst extends Sequencer {
  sort(tests) {
    const sorted = super.sort(tests);
    if (sorted.some((test) => test.duration != null)) return sorted;
    const rank = (test) => {
      const at = SLOW_FIRST.indexOf(test.context.config.displayName?.name);
      return at === -1 ? SLOW_FIRST.length : at;
    };
    return sorted.sort((a, b) => rank(a) - rank(b)); // stable: keeps the size order within a project
  }
}

module.exports = SlowProjectsFirst;

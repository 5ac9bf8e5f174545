import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '@sundial/testing';
import type { ScenarioResult } from './scenario';

/**
 * Every race of docs/spec.md §3.5, many times over: the conformance race suite itself
 * (test/conformance/races.test.ts) with its seed count raised through SUNDIAL_RACE_SEEDS, on the
 * in-memory engine (unit project) and on Redis (conformance project). A failed case is a wrong outcome.
 */
export function runRaces(seeds: { memory: number; redis: number }): ScenarioResult {
  const began = Date.now();
  const dir = mkdtempSync(join(tmpdir(), 'sundial-races-'));
  const output = join(dir, 'races.json');
  try {
    const jest = spawnSync(
      process.execPath,
      [
        '--experimental-vm-modules',
        '--disable-warning=ExperimentalWarning',
        join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js'),
        'test/conformance/races.test.ts',
        '--selectProjects',
        'unit',
        'conformance',
        '--json',
        `--outputFile=${output}`,
      ],
      {
        cwd: ROOT,
        env: { ...process.env, SUNDIAL_RACE_SEEDS: `memory=${seeds.memory},redis=${seeds.redis}` },
        encoding: 'utf8',
        // the Redis half takes about half a second a case
        timeout: 20 * 60_000,
      },
    );
    const report = JSON.parse(readFileSync(output, 'utf8')) as {
      numTotalTests: number;
      numFailedTests: number;
      testResults: { assertionResults: { status: string; fullName: string; failureMessages: string[] }[] }[];
    };
    const failures = report.testResults.flatMap((file) =>
      file.assertionResults.filter((test) => test.status === 'failed'),
    );
    if (report.numTotalTests === 0) throw new Error(`the race suite ran nothing:\n${jest.stderr}`);
    return {
      name: `every race of the spec (§3.5): memory ×${seeds.memory} seeds, Redis ×${seeds.redis} seeds`,
      faults: report.numTotalTests,
      seconds: Math.round((Date.now() - began) / 1000),
      ledger: false,
      timers: report.numTotalTests,
      runs: 0,
      ...{ lost: 0, duplicated: 0, allowed: 0, early: 0, stale: 0, maxLatenessMs: 0 },
      wrong: report.numFailedTests,
      problems: failures
        .slice(0, 4)
        .map((test) => `wrong: ${test.fullName}: ${test.failureMessages[0]?.slice(0, 300)}`),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

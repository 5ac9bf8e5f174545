import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '@sundial/testing/harness';
import type { ScenarioResult } from './scenario';

export interface RaceSeeds {
  memory: number;
  redis: number;
  /** processes the Redis seeds are split over, side by side (each case mostly waits on real time) */
  shards: number;
}

interface JestReport {
  numTotalTests: number;
  numFailedTests: number;
  testResults: { assertionResults: { status: string; fullName: string; failureMessages: string[] }[] }[];
}

/**
 * Every race of docs/spec.md §3.5, many times over: the conformance race suite itself
 * (test/conformance/races.test.ts) with its seeds set through SUNDIAL_RACE_SEEDS, on the in-memory engine
 * (unit project, one process) and on Redis (conformance project: the seeds split over `shards`
 * processes, each with its own redis-server). A failed case is a wrong outcome.
 */
export async function runRaces(seeds: RaceSeeds): Promise<ScenarioResult> {
  const began = Date.now();
  const dir = mkdtempSync(join(tmpdir(), 'sundial-races-'));
  try {
    const runs: Promise<JestReport>[] = [];
    if (seeds.memory > 0) runs.push(raceSuite(dir, 'unit', `memory=${seeds.memory},redis=0`));
    const perShard = Math.ceil(seeds.redis / Math.max(1, seeds.shards));
    for (let from = 1; from <= seeds.redis; from += perShard) {
      const to = Math.min(seeds.redis, from + perShard - 1);
      runs.push(raceSuite(dir, 'conformance', `memory=0,redis=${from}-${to}`));
    }
    const reports = await Promise.all(runs);
    const total = reports.reduce((sum, report) => sum + report.numTotalTests, 0);
    const failures = reports.flatMap((report) =>
      report.testResults.flatMap((file) => file.assertionResults.filter((test) => test.status === 'failed')),
    );
    return {
      name: `every race of the spec (§3.5): memory ×${seeds.memory} seeds, Redis ×${seeds.redis} seeds`,
      faults: total,
      seconds: Math.round((Date.now() - began) / 1000),
      ledger: false,
      timers: total,
      runs: 0,
      ...{ lost: 0, duplicated: 0, allowed: 0, early: 0, stale: 0, maxLatenessMs: 0 },
      wrong: failures.length,
      problems: failures
        .slice(0, 4)
        .map((test) => `wrong: ${test.fullName}: ${test.failureMessages[0]?.slice(0, 300)}`),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

let reportCount = 0;

/** One jest process over the race suite in `project` with SUNDIAL_RACE_SEEDS = `seeds`; its JSON report. */
function raceSuite(dir: string, project: 'unit' | 'conformance', seeds: string): Promise<JestReport> {
  const output = join(dir, `races-${++reportCount}.json`);
  const jest = spawn(
    process.execPath,
    [
      '--experimental-vm-modules',
      '--disable-warning=ExperimentalWarning',
      join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js'),
      'test/conformance/races.test.ts',
      '--selectProjects',
      project,
      '--json',
      `--outputFile=${output}`,
    ],
    {
      cwd: ROOT,
      env: { ...process.env, SUNDIAL_RACE_SEEDS: seeds },
      stdio: ['ignore', 'ignore', 'pipe'],
      // a Redis case takes about half a second; no shard may hang the run
      timeout: 30 * 60_000,
    },
  );
  let stderr = '';
  jest.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4_000)));
  return new Promise((resolve, reject) => {
    jest.on('error', reject);
    jest.on('close', () => {
      try {
        const report = JSON.parse(readFileSync(output, 'utf8')) as JestReport;
        if (report.numTotalTests === 0) throw new Error('it ran nothing');
        resolve(report);
      } catch (error) {
        reject(
          new Error(`the race suite (${project}, ${seeds}) failed: ${(error as Error).message}\n${stderr}`),
        );
      }
    });
  });
}

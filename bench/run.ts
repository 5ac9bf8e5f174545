// Resolves @sundial/* in the compiled tree (the apps' entry points do the same).
import '../libs/server/src/register-paths';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { BenchRedis } from './bench-redis';
import { latenessChart } from './chart';
import { FULL, QUICK } from './config';
import { CONTENDERS, FIRE_PATH_VARIANTS } from './contenders';
import { renderMarkdown, writeReport, type BenchReport } from './report';
import { cancelAll } from './scenarios/cancel-all';
import { churn } from './scenarios/churn';
import { clusterScaling } from './scenarios/cluster-scaling';
import { commandsPerFire } from './scenarios/commands';
import { fireThroughput } from './scenarios/fire-throughput';
import type { BenchContext, Scenario } from './scenarios/harness';
import { lateness } from './scenarios/lateness';
import { memoryPerTimer } from './scenarios/memory';
import { scheduleThroughput } from './scenarios/schedule-throughput';

const SCENARIOS: ReadonlyArray<[string, Scenario]> = [
  ['schedule throughput', scheduleThroughput],
  ['fire lateness', lateness],
  ['fire throughput', fireThroughput],
  ['churn', churn],
  ['memory per pending timer', memoryPerTimer],
  ['cancelAll', cancelAll],
  ['commands per fired timer', commandsPerFire],
  ['Redis Cluster scaling', clusterScaling],
];

const CLOCK =
  'this machine’s system clock, shared by every process: run start is performance.timeOrigin + ' +
  'performance.now() in the worker process when the handler starts (µs resolution, within ~5 µs of Date.now()); ' +
  'due is the time the timer was scheduled for (Sundial: ctx.due; BullMQ: job.timestamp + job.opts.delay).';

/**
 * `npm run bench [-- --quick] [--only <name>]`: every scenario (or those whose name contains `<name>`) for
 * both sides on a private Redis; prints the table, and saves it when every scenario ran.
 */
async function main(): Promise<void> {
  const sizes = process.argv.includes('--quick') ? QUICK : FULL;
  const scenarios = selectedScenarios(process.argv);
  const startedAt = new Date();
  const redis = await BenchRedis.start();
  try {
    const description = await redis.describe();
    console.log(`Sundial bench (${sizes.mode}) on Redis ${description.version} at ${redis.url}`);
    console.log(`Redis config: ${JSON.stringify(description.settings)}`);
    const report: BenchReport = {
      startedAt: startedAt.toISOString(),
      durationMs: 0,
      sizes,
      machine: {
        node: process.version,
        cpus: cpus().length,
        platform: `${process.platform}/${process.arch}`,
      },
      clock: CLOCK,
      redis: description,
      rows: [],
      lateness: [],
      details: {},
    };
    for (const [name, scenario] of scenarios) {
      const context: BenchContext = {
        redis,
        sizes,
        contenders: CONTENDERS,
        variants: FIRE_PATH_VARIANTS,
        log: (line) => console.log(`  [${name}] ${line}`),
      };
      const scenarioStart = Date.now();
      console.log(`${name}…`);
      const result = await scenario(context);
      report.rows.push(...result.rows);
      report.lateness.push(...(result.lateness ?? []));
      report.details[name] = result.details ?? {};
      console.log(`  [${name}] done in ${((Date.now() - scenarioStart) / 1000).toFixed(1)} s`);
    }
    await redis.flush();
    report.durationMs = Date.now() - startedAt.getTime();
    console.log(`\n${renderMarkdown(report)}`);
    if (scenarios !== SCENARIOS) return; // a partial run is for looking at, not a report to keep
    const stem = `${startedAt.toISOString().slice(0, 10)}${sizes.mode === 'quick' ? '-quick' : ''}`;
    const files = writeReport(report, latenessChart(report.lateness), resultsDir(), stem);
    console.log(`Wrote ${files.join(', ')}`);
  } finally {
    await redis.stop();
  }
}

/** `--only <name>` keeps the scenarios whose name contains `name` (e.g. `--only churn`); none given = all. */
function selectedScenarios(argv: readonly string[]): ReadonlyArray<[string, Scenario]> {
  const at = argv.indexOf('--only');
  if (at === -1) return SCENARIOS;
  const wanted = argv[at + 1];
  const picked = SCENARIOS.filter(([name]) => wanted !== undefined && name.includes(wanted));
  if (picked.length === 0) {
    throw new Error(`--only expects part of a scenario name: ${SCENARIOS.map(([name]) => name).join(', ')}`);
  }
  return picked;
}

/** bench/results in the source tree (this file runs as dist/bench/run.js). */
function resultsDir(): string {
  return join(__dirname, '..', '..', 'bench', 'results');
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

// Resolves @sundial/* in the compiled tree (the apps' entry points do the same).
import '../../libs/server/src/register-paths';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureBuilt, ROOT } from '@sundial/testing/harness';
import { SCENARIOS } from './faults';
import { runRaces } from './races';
import { chaosTable, problemList, writeReliability } from './report';
import { runScenario, type ScenarioResult } from './scenario';

/**
 * `npm run chaos`: every scenario of test/chaos/faults.ts on a fresh cluster, then the spec's races many
 * times; prints the table and writes it into docs/reliability.md. Options: `--only <text>` runs the
 * scenarios whose name contains it (`--only 'every race'`: the races alone), `--races
 * memory=N,redis=M,shards=S` sets the race seeds and how many processes share the Redis ones (`--races 0`
 * skips them), `--no-write` leaves the document alone. Exits 1 when any scenario found a problem.
 */
/** Processes the Redis race seeds are split over by default: each case mostly waits on real time. */
const RACE_SHARDS = 10;

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const option = (name: string) => {
    const at = args.indexOf(name);
    return at >= 0 ? args[at + 1] : undefined;
  };
  const only = option('--only');
  const races = option('--races') ?? 'memory=1000,redis=1000';
  await ensureBuilt();
  const results: ScenarioResult[] = [];
  for (const scenario of SCENARIOS.filter((scenario) => !only || scenario.name.includes(only))) {
    process.stdout.write(`${scenario.name} … `);
    const result = await runScenario(scenario);
    process.stdout.write(`${result.seconds} s\n`);
    results.push(result);
  }
  if (races !== '0' && (!only || 'every race of the spec'.includes(only))) {
    const seeds = Object.fromEntries(
      races
        .split(',')
        .map((pair) => pair.split('='))
        .map(([k, v]) => [k, Number(v)]),
    );
    process.stdout.write('spec races … ');
    const result = await runRaces({
      memory: seeds.memory ?? 0,
      redis: seeds.redis ?? 0,
      shards: seeds.shards ?? RACE_SHARDS,
    });
    process.stdout.write(`${result.seconds} s\n`);
    results.push(result);
  }
  console.log(`\n${chaosTable(results)}\n\n${problemList(results)}`);
  if (!args.includes('--no-write') && !only) {
    const path = join(ROOT, 'docs', 'reliability.md');
    console.log(
      `\nwritten to ${await writeReliability(results, existsSync(path) ? readFileSync(path, 'utf8') : '')}`,
    );
  }
  const bad = results.some((r) => r.lost + r.early + r.stale + r.wrong + (r.duplicated - r.allowed) > 0);
  process.exit(bad ? 1 : 0);
}

main().catch((error: Error) => {
  console.error(error);
  process.exit(2);
});

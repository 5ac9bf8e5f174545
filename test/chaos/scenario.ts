import { waitFor } from '@sundial/testing/harness';
import { ChaosCluster, type ClusterOptions, type FinalState, LEASE_MS } from './cluster';
import { checkLedger, type Verdict } from './ledger';
import { Load } from './load';

export interface Scenario extends ClusterOptions {
  name: string;
  /** injects the faults while the load runs (bounded in count and time); resolves with how many landed */
  inject(cluster: ChaosCluster): Promise<number>;
}

export interface ScenarioResult extends Verdict {
  name: string;
  faults: number;
  seconds: number;
  /** false for a row that is a test suite's count of cases, not a ledger (no lost/early/lateness columns) */
  ledger: boolean;
}

export interface RunOptions {
  /** timers written per 250 ms tick */
  perTick?: number;
  /** load before the faults start and after they end, ms */
  warmupMs?: number;
  cooldownMs?: number;
}

/** How long every timer gets to end after the load stops: leases, reconciler passes, the longest mix. */
const SETTLE_DEADLINE_MS = 45_000;

/**
 * One scenario: a fresh cluster under a steady mixed load, the fault, the load stopped, every timer
 * given time to end, then the ledger. Whatever happens, the cluster is torn down.
 */
export async function runScenario(scenario: Scenario, options: RunOptions = {}): Promise<ScenarioResult> {
  const { perTick = 5, warmupMs = 2_500, cooldownMs = 1_500 } = options;
  const began = Date.now();
  const cluster = await ChaosCluster.start(scenario);
  try {
    const load = new Load({
      client: cluster.client,
      apis: () => cluster.schedulers.map((scheduler) => scheduler.api),
      prefix: `chaos`,
      perTick,
    });
    load.start();
    await sleep(warmupMs);
    const faults = await scenario.inject(cluster).catch(async (error: Error) => {
      await load.stop();
      throw error;
    });
    await sleep(cooldownMs);
    await load.stop();
    const keys = [...new Set(load.writes.map((write) => write.key))];
    const ended = await settled(cluster, keys);
    const { rows, tombstones } = ended ?? (await cluster.finalState(keys));
    const verdict = checkLedger({
      writes: load.writes,
      runs: await cluster.runs(),
      rows,
      tombstones,
      histories: await cluster.histories(keys),
      leaseMs: LEASE_MS,
      killedPids: cluster.killedPids,
    });
    return {
      name: scenario.name,
      faults,
      seconds: Math.round((Date.now() - began) / 1000),
      ledger: true,
      ...verdict,
      wrong: verdict.wrong + cluster.wrongAnswers.length,
      problems: [...verdict.problems, ...cluster.wrongAnswers.map((text) => `wrong: ${text}`)],
    };
  } finally {
    await cluster.stop();
  }
}

/**
 * The final state once no key holds a pending or running timer and no free run is in flight (a dead
 * worker's run of an ended timer still runs again); undefined when the deadline passed first.
 */
async function settled(cluster: ChaosCluster, keys: string[]): Promise<FinalState | undefined> {
  return waitFor(
    async () => {
      const state = await cluster.finalState(keys);
      const open = [...state.rows.values()].some(
        (row) => row?.status === 'pending' || row?.status === 'running',
      );
      return !open && state.freeRuns === 0 && state;
    },
    { timeoutMs: SETTLE_DEADLINE_MS, intervalMs: 1_000, what: 'every timer to end' },
  ).catch(() => undefined);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((wake) => setTimeout(wake, ms));
}

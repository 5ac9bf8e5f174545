import { startRedisCluster } from '@sundial/testing/harness';
import { Redis } from 'ioredis';
import { sundialOnPartitions } from '../contenders/sundial';
import { Fleet } from '../processes/fleet';
import { row, type Row } from '../report';
import { ratePerSecond } from '../stats';
import { leadTimeMs, oneShots, scheduleInBatches, sustainedRate, type Scenario } from './harness';

/** Divisible by every primary count measured, so each primary serves as many partitions as the others. */
const PARTITIONS = 6;
const HOUR_MS = 3_600_000;
const DUE_SPAN_MS = 500;
const DRAIN_DEADLINE_MS = 120_000;
const WORKER_PROCESSES = 1;

/**
 * 8. Sundial on a Redis Cluster of 1, 2 and 3 primaries (issue 12), its 6 partitions spread over them:
 * schedule throughput (far-future one-shots, sequential batches) and fire throughput (a backlog drained by
 * one worker process, as in 3.), and each shard's Redis CPU (user + sys) per fired timer. Raw BullMQ is
 * not run here (its queue would live on one shard). The full run only: each size starts its own cluster.
 */
export const clusterScaling: Scenario = async (context) => {
  const { clusterPrimaries, clusterCount: count, batchSize, concurrency } = context.sizes;
  const rows: Row[] = [];
  const details: Record<string, unknown> = {};
  for (const primaries of clusterPrimaries) {
    const cluster = await startRedisCluster(primaries);
    const admins = cluster.nodes.map((node) => new Redis(node.url));
    const flush = () => Promise.all(admins.map((admin) => admin.flushall()));
    const contender = sundialOnPartitions(PARTITIONS)(cluster.url);
    try {
      const far = oneShots('bench.cl.sched.', count, () => Date.now() + HOUR_MS);
      const started = performance.now();
      await scheduleInBatches(contender, far, batchSize);
      const scheduleRate = ratePerSecond(count, performance.now() - started);
      await flush();

      const fleet = await Fleet.start(
        cluster.url,
        [
          ...contender.serviceRoles.map((role) => ({ role, count: 1 })),
          { role: contender.workerRole, count: WORKER_PROCESSES },
        ],
        { concurrency, partitions: PARTITIONS },
      );
      let fireRate: number;
      let cpuPerTimerUs: number[];
      try {
        const cpuBefore = await Promise.all(admins.map(cpuSeconds));
        // Every timer is scheduled before the first falls due (at the rate just measured), so the
        // drain measures the fire path, not scheduling.
        const firstDue = Date.now() + Math.max(leadTimeMs(count), (1_500 * count) / scheduleRate + 1_000);
        const due = oneShots(
          'bench.cl.fire.',
          count,
          (i) => firstDue + Math.floor((i * DUE_SPAN_MS) / count),
        );
        await scheduleInBatches(contender, due, batchSize);
        await fleet.waitForRuns(count, Date.now() + DRAIN_DEADLINE_MS);
        const cpuAfter = await Promise.all(admins.map(cpuSeconds));
        fireRate = sustainedRate(fleet.runs);
        // Scheduling the timers is part of their cost, as in 7.
        cpuPerTimerUs = cpuAfter.map((after, shard) => ((after - cpuBefore[shard]) * 1e6) / count);
        details[`${primaries} primaries`] = {
          fired: count,
          ran: fleet.runs.length,
          scheduleRate,
          fireRate,
          cpuPerTimerUs,
        };
      } finally {
        await fleet.stop();
      }
      context.log(
        `${primaries} primaries: schedule ${Math.round(scheduleRate)}/s, fire ${Math.round(fireRate)} runs/s, ` +
          `Redis CPU per fired timer ${cpuPerTimerUs.map((us) => `${us.toFixed(1)} µs`).join(' / ')}`,
      );
      const scenario = `8. Redis Cluster, ${primaries} primar${primaries === 1 ? 'y' : 'ies'} (${PARTITIONS} partitions)`;
      rows.push(
        row(scenario, 'schedule timers/s', { sundial: scheduleRate }),
        row(scenario, `fire runs/s (${WORKER_PROCESSES} worker process)`, { sundial: fireRate }),
        ...cpuPerTimerUs.map((us, shard) =>
          row(scenario, `Redis CPU µs per fired timer, shard ${shard + 1}`, { sundial: us }),
        ),
      );
    } finally {
      await contender.close();
      for (const admin of admins) admin.disconnect();
      await cluster.stop();
    }
  }
  return { rows, details };
};

/** used_cpu_user + used_cpu_sys of one node, in seconds. */
async function cpuSeconds(admin: Redis): Promise<number> {
  const info = await admin.info('cpu');
  const field = (name: string) => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)?.[1] ?? NaN);
  return field('used_cpu_user') + field('used_cpu_sys');
}

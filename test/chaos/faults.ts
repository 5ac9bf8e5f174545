import { SundialKeys } from '@sundial/redis';
import { Queue } from 'bullmq';
import { LEASE_MS, PARTITIONS } from './cluster';
import { droppedReplies } from './dropped-replies';
import { scriptMatcher, withDeadline } from './fault-tools';
import { readValue } from './reply-proxy';
import { type Scenario, sleep } from './scenario';

/** Every fault loop is bounded in count and in time. */
async function repeat(
  times: number,
  everyMs: number,
  fault: (n: number) => Promise<boolean>,
): Promise<number> {
  let landed = 0;
  for (let n = 0; n < times; n++) {
    const started = Date.now();
    if (await fault(n)) landed++;
    await sleep(Math.max(0, everyMs - (Date.now() - started)));
  }
  return landed;
}

/** SIGKILLs a worker while long handlers run on it, then starts a replacement; `times` times. */
const workerKill = (times: number): Scenario => ({
  name: `worker SIGKILL mid-run ×${times}`,
  async inject(cluster) {
    return repeat(times, 2_500, async (n) => {
      const victim = cluster.workers[n % cluster.workers.length];
      await cluster.kill(victim);
      await cluster.spawn('worker');
      return true;
    });
  },
});

/**
 * Stops a worker (SIGSTOP) while long handlers run on it for longer than its lease, then lets it go on
 * (SIGCONT): a live worker that renews nothing for a lease, as one starved of CPU on a loaded host. Its
 * at-least-once runs run again on the other worker, each with the ledger's word for why (requeues.ts).
 */
const workerFrozen: Scenario = {
  name: `worker frozen (SIGSTOP) ${(LEASE_MS + 1_500) / 1000} s mid-run, past the ${LEASE_MS / 1000} s lease`,
  async inject(cluster) {
    const victim = cluster.workers[0];
    victim.kill('SIGSTOP');
    try {
      await sleep(LEASE_MS + 1_500); // the fault itself: frozen past its lease, then let go
    } finally {
      victim.kill('SIGCONT');
    }
    return 1;
  },
};

/**
 * SIGKILLs a scheduler at the moment Redis answers a take-due that moved timers to `armed`: the
 * timers are taken and no fire job will ever be added for them (the reconciler must re-arm them).
 */
const schedulerKill = (times: number): Scenario => ({
  name: `scheduler SIGKILL between take-due and queuing ×${times}`,
  proxy: 'scheduler-0',
  async inject(cluster) {
    const takeDue = scriptMatcher('take-due');
    return repeat(times, 2_000, async () => {
      const victim = cluster.proxiedScheduler!;
      let hit = false;
      cluster.proxy!.dropReplyTo({
        matches: takeDue,
        when: tookTimers,
        then: () => {
          hit = true;
          victim.kill('SIGKILL');
        },
      });
      await withDeadline(5_000, () => (hit ? true : undefined));
      cluster.proxy!.dropReplyTo(undefined);
      if (!hit) return false;
      await cluster.kill(victim);
      await cluster.spawn('scheduler'); // through the proxy again
      return hit;
    });
  },
});

/** Kills Redis with `signal` and starts it again on the same port and AOF, `times` times. */
function redisRestart(
  signal: 'SIGKILL' | 'SIGTERM',
  appendfsync: 'always' | 'everysec',
  times = 2,
): Scenario {
  return {
    name: `Redis ${signal}, appendfsync ${appendfsync} ×${times}`,
    appendfsync,
    async inject(cluster) {
      return repeat(times, 4_000, async () => {
        await cluster.node.signal(signal);
        await sleep(1_000);
        await cluster.node.restart();
        return true;
      });
    },
  };
}

/**
 * Freezes Redis (SIGSTOP) for longer than a lease, then thaws it: a held run's lease may run out while its
 * worker lives, and it runs again where the ledger says so (requeues.ts).
 */
const redisFrozen: Scenario = {
  name: `Redis frozen (SIGSTOP) ${(LEASE_MS + 1_500) / 1000} s, past the ${LEASE_MS / 1000} s lease`,
  async inject(cluster) {
    await cluster.node.signal('SIGSTOP');
    await sleep(LEASE_MS + 1_500); // the fault itself: frozen past the lease, then let go
    await cluster.node.signal('SIGCONT');
    return 1;
  },
};

/** `CLIENT KILL TYPE normal` from a side connection every 100 ms for 4 s. */
const clientKill: Scenario = {
  name: 'client connections killed every 100 ms for 4 s',
  async inject(cluster) {
    let killed = 0;
    await repeat(40, 100, async () => {
      killed += Number(await cluster.node.side.call('CLIENT', 'KILL', 'TYPE', 'normal').catch(() => 0));
      return true;
    });
    return killed;
  },
};

/** maxmemory lowered to just above what Redis uses, for 3 s, then lifted. */
const outOfMemory: Scenario = {
  name: 'out of memory for 3 s (maxmemory lowered under load, then raised)',
  async inject(cluster) {
    const info = await cluster.node.side.info('memory');
    const used = Number(/used_memory:(\d+)/.exec(info)![1]);
    await cluster.node.side.config('SET', 'maxmemory', String(used + 32 * 1024));
    await sleep(3_000);
    await cluster.node.side.config('SET', 'maxmemory', '0');
    return 1;
  },
};

/**
 * Fire jobs deleted behind Sundial's back, `times` times: the fire queues are paused for a second (so
 * jobs wait instead of going straight to a worker), every job still waiting is deleted, the queues resume.
 */
const jobsDeleted = (times: number): Scenario => ({
  name: `fire jobs deleted behind its back ×${times}`,
  async inject(cluster) {
    const keys = new SundialKeys('sundial', PARTITIONS);
    const queues = keys.all().map(
      (partition) =>
        new Queue(keys.queueName(partition), {
          connection: { url: cluster.node.url },
          prefix: keys.bullPrefix,
        }),
    );
    let deleted = 0;
    try {
      await repeat(times, 2_000, async () => {
        await Promise.all(queues.map((queue) => queue.pause()));
        await sleep(1_000);
        for (const queue of queues) {
          for (const job of await queue.getJobs(['waiting', 'delayed', 'prioritized'])) {
            // a job a worker took meanwhile is locked: removing it fails, and it runs
            if (
              await job.remove().then(
                () => true,
                () => false,
              )
            )
              deleted++;
          }
        }
        await Promise.all(queues.map((queue) => queue.resume()));
        return true;
      });
    } finally {
      await Promise.all(queues.map((queue) => queue.close()));
    }
    return deleted;
  },
});

/**
 * Whether a take-due reply `{ next, now, job, traced }` moved timers to `armed`: its job (the third
 * item) is not empty. (Not "the reply does not end in an empty list": the traced list comes last.)
 */
function tookTimers(reply: Buffer): boolean {
  let at = reply.indexOf('\r\n') + 2; // past the reply's own array header
  for (let item = 0; item < 2; item++) at = readValue(reply, at)?.end ?? reply.length;
  return reply.toString('latin1', at, reply.indexOf('\r\n', at)) !== '*0';
}

/** Several faults, one after the other, on one cluster (whose options are the union of theirs). */
function inTurn(scenarios: Scenario[]): Scenario {
  return {
    name: scenarios.map((scenario) => scenario.name).join('; '),
    proxy: scenarios.find((scenario) => scenario.proxy)?.proxy,
    appendfsync: scenarios.find((scenario) => scenario.appendfsync)?.appendfsync,
    shutdownGraceMs: scenarios.find((scenario) => scenario.shutdownGraceMs)?.shutdownGraceMs,
    async inject(cluster) {
      let faults = 0;
      for (const scenario of scenarios) {
        const landed = await scenario.inject(cluster);
        // A sum alone would let one kind that landed many times (deleted jobs) hide one that never landed.
        if (landed === 0) throw new Error(`${scenario.name}: the fault never landed`);
        faults += landed;
      }
      return faults;
    },
  };
}

/** The scenarios of `npm run chaos`, in order. */
export const SCENARIOS: Scenario[] = [
  workerKill(3),
  workerFrozen,
  schedulerKill(3),
  redisRestart('SIGKILL', 'always'),
  redisRestart('SIGKILL', 'everysec'),
  redisRestart('SIGTERM', 'always'),
  redisRestart('SIGTERM', 'everysec'),
  redisFrozen,
  clientKill,
  droppedReplies,
  outOfMemory,
  jobsDeleted(3),
];

/** The subset inside `npm test`: faults the cluster handles, in turn on one cluster to stay under a minute. */
export const FAST_SCENARIO: Scenario = inTurn([
  workerKill(1),
  workerFrozen,
  schedulerKill(1),
  redisRestart('SIGKILL', 'always', 1),
  jobsDeleted(1),
]);

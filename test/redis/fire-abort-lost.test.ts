import type { TimerContext, TimerSpec } from '@sundial/core';
import type { RedisTimers } from '@sundial/redis';
import { waitFor } from '@sundial/testing';
import { type FireCluster, recorder, useFirePath, work } from './fire-fixture';

const fire = useFirePath();

/** Renewals every 200 ms (leaseMs / 3): the abort a missed message owes must come within about that. */
const LEASE_MS = 600;
const RENEWAL_MS = LEASE_MS / 3;
/** One renewal period, the renewal's round trip and the host's noise (2 shared cores). */
const DEADLINE_MS = 1000;
/** Names the runner's connections, so its abort subscriber can be found in CLIENT LIST. */
const RUNNER = 'abort-lost-runner';

/**
 * docs/spec.md §4.5: a runner whose `P:abort` subscriber is down when a timer's runs are aborted (here its
 * connection is killed, and it reconnects only after the abort went out) misses the message. A held run
 * still aborts at its next renewal (its lease is gone); a free run's lease survives a pause or reschedule,
 * so its renewal must say so itself.
 */
describe('fire path: an abort message the runner missed', () => {
  /** The runner's abort subscriber is killed and kept away for 500 ms: every reconnect waits that long. */
  async function killAbortSubscriber(): Promise<void> {
    const clients = ((await fire.raw.client('LIST')) as string).split('\n');
    const subscribers = clients.filter((line) => line.includes(` name=${RUNNER} `) && / sub=1 /.test(line));
    expect(subscribers).toHaveLength(1);
    const [, id] = /^id=(\d+) /.exec(subscribers[0]) ?? [];
    await fire.raw.client('KILL', 'ID', id);
  }

  /** Resolves once two renewals went by since now: the held run's lease was extended twice. */
  async function twoRenewals(cluster: FireCluster): Promise<void> {
    const leases = cluster.timers.keys.leases(cluster.partitionOf('held'));
    const before = Number(await fire.raw.zscore(leases, 'held'));
    await waitFor(async () => Number(await fire.raw.zscore(leases, 'held')) >= before + 2 * RENEWAL_MS, {
      timeoutMs: 5000,
      what: 'two lease renewals',
    });
  }

  const runsOf = (calls: TimerContext[], key: string) => calls.filter((ctx) => ctx.key === key);

  async function missedAbort(spec: TimerSpec, change: (timers: RedisTimers) => Promise<unknown>) {
    const cluster = await fire.cluster();
    const job = recorder((ctx) => work(ctx.signal, 10_000));
    await cluster.dispatcher();
    const connection = { url: fire.url(), connectionName: RUNNER, retryStrategy: () => 500 };
    await cluster.runner({ h: job.handler }, { leaseMs: LEASE_MS, connection });
    await cluster.timers.schedule(spec);
    // beside it: a free run of a timer left alone, and a held run
    await cluster.timers.schedule({ key: 'other', handler: 'h', every: 300, awaitTask: false });
    await cluster.timers.schedule({ key: 'held', handler: 'h', delay: 0 });
    await waitFor(() => ['held', 'other', spec.key].every((key) => runsOf(job.calls, key).length > 0), {
      timeoutMs: 5000,
      what: 'a run of each timer',
    });

    await killAbortSubscriber();
    await change(cluster.timers);
    // the abort went out while no runner listened: it reached no one
    expect(await fire.raw.pubsub('NUMSUB', cluster.timers.keys.abortChannel)).toEqual([
      cluster.timers.keys.abortChannel,
      0,
    ]);
    const runs = runsOf(job.calls, spec.key);
    await waitFor(() => runs.every((ctx) => ctx.signal.aborted), {
      timeoutMs: DEADLINE_MS,
      what: `the ${runs.length} run(s) of ${spec.key} aborted`,
    });
    for (const ctx of runs) expect(ctx.signal.reason).toMatchObject({ name: 'AbortError' });

    await twoRenewals(cluster);
    const spared = [...runsOf(job.calls, 'other'), ...runsOf(job.calls, 'held')];
    expect(spared.filter((ctx) => ctx.signal.aborted)).toEqual([]);
    return { cluster, job };
  }

  const interval = { key: 'f', handler: 'h', every: 300, awaitTask: false };

  it('a free run of a paused interval aborts at its next renewal; a run after resume goes on', async () => {
    const { cluster, job } = await missedAbort(interval, (timers) => timers.pause('f'));
    const resumed = await cluster.timers.resume('f');
    const next = await waitFor(() => runsOf(job.calls, 'f').find((ctx) => ctx.version >= resumed.version), {
      timeoutMs: 5000,
      what: 'a run after resume',
    });
    // the pause's mark names the versions up to the paused one only
    await twoRenewals(cluster);
    expect(next.signal.aborted).toBe(false);
  });

  it('a free run of a rescheduled interval aborts at its next renewal', async () => {
    await missedAbort(interval, (timers) => timers.reschedule('f', { delay: 60_000 }));
  });

  it('a free run of a cancelled interval aborts at its next renewal', async () => {
    await missedAbort(interval, (timers) => timers.cancel('f'));
  });

  it('a detached cron run (overlap allow) of a paused timer aborts at its next renewal', async () => {
    const cron = { key: 'c', handler: 'h', cron: '* * * * * *', tz: 'UTC', overlap: 'allow' as const };
    await missedAbort(cron, (timers) => timers.pause('c'));
  });
});

import type { TimerContext, TimerSpec } from '@sundial/core';
import type { FireCommands, RedisTimers } from '@sundial/redis';
import { waitFor } from '@sundial/testing/harness';
import { type FireCluster, recorder, refOf, useFirePath, work } from './fire-fixture';

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
    // (`P:abort` and `P:handlers:new`: sub=2)
    const subscribers = clients.filter(
      (line) => line.includes(` name=${RUNNER} `) && / sub=[1-9]/.test(line),
    );
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

/** renew-leases.lua's answer per run, by the commands alone: what a runner that missed the message acts on. */
describe('renew-leases: a free run whose timer changed since it began', () => {
  type Lease = Parameters<FireCommands['renewLeases']>[3][number];

  /** Claims the timer's current version now (its due moved back a slot): the lease to renew. */
  async function claimNow(cluster: FireCluster, key: string): Promise<Lease & { version: number }> {
    const timer = await cluster.timers.get(key);
    if (!timer) throw new Error(`no timer ${key}`);
    const ref = { ...refOf(timer), due: timer.dueAt - 60_000 };
    await fire.raw.hset(cluster.timers.keys.row(key), 'd', String(ref.due));
    const [claimed] = await cluster.commands.claim(0, 30_000, 'w', [ref]);
    if (claimed.kind !== 'claimed') throw new Error(`${key} was not claimed: ${JSON.stringify(claimed)}`);
    const lease = claimed.mode === 'free' ? `${key}|${ref.version}` : key;
    return { key: lease, runCount: Number(claimed.fields.rc), version: ref.version };
  }

  const renew = (cluster: FireCluster, leases: Lease[]) =>
    cluster.commands.renewLeases(0, 30_000, 'w', leases);
  const free = { key: 'f', handler: 'h', every: 60_000, awaitTask: false };

  it('paused: aborted, its lease still renewed; a run after resume and a held run go on', async () => {
    const cluster = await fire.cluster();
    await cluster.timers.schedule(free);
    await cluster.timers.schedule({ key: 'o', handler: 'h', every: 60_000 });
    const first = await claimNow(cluster, 'f');
    const held = await claimNow(cluster, 'o');
    expect(await renew(cluster, [first, held])).toEqual(['held', 'held']);
    await cluster.timers.pause('f');
    const leases = cluster.timers.keys.leases(0);
    const before = Number(await fire.raw.zscore(leases, first.key));
    // a millisecond later than the claim, so the renewal's lease end is later than the claim's
    await waitFor(async () => (await cluster.redisNow()) > before - 30_000, { what: 'a later Redis now' });
    expect(await renew(cluster, [first, held])).toEqual(['aborted', 'held']);
    expect(Number(await fire.raw.zscore(leases, first.key))).toBeGreaterThan(before);
    await cluster.timers.resume('f');
    const next = await claimNow(cluster, 'f');
    expect(await renew(cluster, [first, next, held])).toEqual(['aborted', 'held', 'held']);
  });

  it('cancelled or rescheduled: aborted', async () => {
    const cluster = await fire.cluster();
    await cluster.timers.schedule(free);
    await cluster.timers.schedule({ ...free, key: 'g' });
    const cancelled = await claimNow(cluster, 'f');
    const rescheduled = await claimNow(cluster, 'g');
    await cluster.timers.cancel('f');
    await cluster.timers.reschedule('g', { delay: 60_000 });
    expect(await renew(cluster, [cancelled, rescheduled])).toEqual(['aborted', 'aborted']);
  });

  it('its timer ended: held; the ended key scheduled anew: aborted (its completion would be stale)', async () => {
    const cluster = await fire.cluster();
    const timer = await cluster.timers.schedule({ ...free, maxRuns: 2 });
    const first = await claimNow(cluster, 'f');
    // the second, final run is held; it completes, and the row is kept for the free run in flight
    const last = await claimNow(cluster, 'f');
    const ref = { ...refOf(timer), version: last.version, due: 0 };
    const done = { ...ref, runCount: last.runCount, mode: 'held' as const, outcome: 'ok' as const };
    await cluster.commands.complete(0, [{ ...done, missed: 0, overlap: 0, once: false }]);
    expect(await cluster.timers.get('f')).toMatchObject({ status: 'completed', id: timer.id });
    expect(await renew(cluster, [first])).toEqual(['held']);
    await cluster.timers.schedule(free);
    expect(await renew(cluster, [first])).toEqual(['aborted']);
  });
});

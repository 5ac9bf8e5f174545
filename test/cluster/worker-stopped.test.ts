import type { LedgerEntry, Timer } from '@sundial/core';
import { RedisTimers } from '@sundial/redis';
import * as testing from '@sundial/testing/harness';
import { type AppProcess, readRuns, spawnApp } from '@sundial/testing/harness';
import { Redis } from 'ioredis';

/**
 * The stopped worker's lease: a stop of a few seconds outlasts it. The other processes keep the default
 * (30 s): the other worker, stalled past a short lease on a loaded host, would lose the run again.
 */
const LEASE = { SUNDIAL_LEASE_MS: '1500' };

/** A counter in a process's /metrics, summed over its labels (over the series with `label` when given). */
async function scraped(app: AppProcess, name: string, label = ''): Promise<number> {
  const reply = await app.api<string>('GET', '/metrics');
  const lines = reply.body
    .split('\n')
    .filter((text) => new RegExp(`^${name}[ {]`).test(text) && text.includes(label));
  return lines.reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

/** Whether a BullMQ job is active with its lock gone (its worker stopped past it): the stalled check's to put back. */
async function activeWithoutLock(redis: Redis): Promise<boolean> {
  for (const active of await redis.keys('*:active')) {
    const queue = active.slice(0, -'active'.length);
    for (const id of await redis.lrange(active, 0, -1))
      if (!(await redis.exists(`${queue}${id}:lock`))) return true;
  }
  return false;
}

/**
 * Whether BullMQ gave up on a fire job as stalled too often (its `maxStalledCount`, 1): a job stalled a
 * second time is put back marked to fail (`defa`), and the worker that takes it fails it without running it.
 */
async function failedAsStalled(redis: Redis): Promise<boolean> {
  for (const failed of await redis.keys('*:failed')) {
    const queue = failed.slice(0, -'failed'.length);
    for (const id of await redis.zrange(failed, '0', '-1'))
      if ((await redis.hget(`${queue}${id}`, 'failedReason'))?.includes('stalled more than allowable limit'))
        return true;
  }
  return false;
}

/**
 * docs/spec.md §3.2 step 4, §3.8: a worker process that is alive but does nothing for longer than its
 * lease — here SIGSTOPped mid-run, as a process starved of CPU on a loaded host is in effect — loses its
 * runs while it lives. What the chaos suite saw at load 15–17 ("ran again after a run on pid X, which did
 * not die"), made to happen on purpose: its at-least-once run is run again by another worker, its
 * at-most-once run recorded lost; when it is let go (SIGCONT) its renewals find the leases gone, its runs
 * abort, and their completions are stale — nothing it records overwrites the run again's outcome. The
 * ledger says why the timer ran twice: a `lost` entry, reason `requeued`, naming the stopped worker.
 */
describe('a worker stopped (SIGSTOP) past its lease, then let go', () => {
  const apps: AppProcess[] = [];
  const opened: { redis?: testing.RedisServer; client?: RedisTimers; records?: Redis; raw?: Redis } = {};

  beforeAll(async () => {
    const [redis] = await Promise.all([testing.startRedis(), testing.ensureBuilt()]);
    opened.redis = redis;
  }, 180_000);

  afterAll(async () => {
    for (const app of apps) app.kill('SIGCONT');
    await opened.client?.dispose();
    opened.records?.disconnect();
    opened.raw?.disconnect();
    await testing.killAll(apps);
    await opened.redis?.stop();
  });

  it('runs its at-least-once run again elsewhere, records its at-most-once run lost, and its late completions are stale', async () => {
    const env = testing.clusterEnv(opened.redis!.url);
    const start = async (app: 'scheduler' | 'worker', name: string, lease = {}) => {
      const started = await spawnApp(app, name, { ...env, ...lease });
      apps.push(started);
      return started;
    };
    // side by side: no timer exists before both are up
    const [scheduler, stopped] = await Promise.all([
      start('scheduler', 'scheduler'),
      start('worker', 'stopped', LEASE),
    ]);
    const client = (opened.client = new RedisTimers({ connection: opened.redis!.url, partitions: 2 }));
    const records = (opened.records = new Redis(`${opened.redis!.url}/1`));
    opened.raw = new Redis(opened.redis!.url);
    const keys = { again: 'stopped:at-least-once', lost: 'stopped:at-most-once' };
    for (const [name, key] of Object.entries(keys)) {
      await client.schedule({
        key,
        handler: 'gated',
        payload: { release: `release:${key}` },
        delay: 100,
        delivery: name === 'lost' ? 'at-most-once' : 'at-least-once',
        removeOnComplete: false,
      });
    }
    const started = async () => (await readRuns(records)).filter((run) => run.event === 'started');
    await testing.waitFor(async () => (await started()).length === 2, { what: 'both runs on the worker' });
    const other = await start('worker', 'other');

    stopped.kill('SIGSTOP');
    // deadline: the lease (1.5 s) runs out, a reconcile pass (every 0.3 s) or a redelivered job's claim
    // settles it, the other worker claims the run put back; a loaded host takes longer
    const rerun = await testing.waitFor(
      async () => (await started()).find((run) => run.key === keys.again && run.runCount === 2),
      { timeoutMs: 30_000, intervalMs: 100, what: 'the at-least-once run to run again' },
    );
    expect(rerun.pid).toBe(other.pid);
    expect(await client.get(keys.lost)).toMatchObject({
      status: 'failed',
      runCount: 1,
      last: { status: 'failed', error: { reason: 'lost' } },
    });

    // The other worker stopped a moment too, until the stopped worker, let go, has taken its own fire jobs
    // again: BullMQ's stalled check puts a job back once its lock (3 s, twice the lease) ran out while its
    // worker was stopped — on a loaded host that happens unasked, to either worker. Its claims of them are
    // stale (its runs were taken over): an entry each naming it, and counted on its metrics (below).
    other.kill('SIGSTOP');
    const staleClaims = () => scraped(stopped, 'sundial_runs_stale_total', 'phase="claim"');
    // deadline: the stopped worker's BullMQ lock (3 s) runs out
    await testing.waitFor(() => activeWithoutLock(opened.raw!), {
      timeoutMs: 30_000,
      intervalMs: 100,
      what: "the stopped worker's BullMQ lock to run out",
    });
    stopped.kill('SIGCONT');
    // deadline: its stalled check (every 1.5 s) puts its jobs back, and it claims them — unless the job
    // had stalled once already (the other worker's stalled check handed it over while the stopped worker
    // was stopped, and the other's claim took the run over): stalled twice, BullMQ fails it on pickup,
    // unrun, and no claim comes (seen once in a loaded CI run)
    const handedBack = await testing.waitFor(
      async () => ((await staleClaims()) >= 1 ? 'claimed' : (await failedAsStalled(opened.raw!)) && 'failed'),
      { timeoutMs: 15_000, what: 'the stopped worker to claim its own fire job again, or BullMQ to fail it' },
    );
    other.kill('SIGCONT');
    // deadline: its next renewals (every 0.5 s) find both leases gone and abort the runs
    await testing.waitFor(
      () =>
        stopped.lines.filter((line) => line.includes('lease lost (reclaimed or settled lost)')).length >= 2,
      { timeoutMs: 15_000, what: "the stopped worker's renewals to find its leases gone" },
    );
    // Its aborted runs' completions, stale, answered before the run again may end: a renewal aborts a run
    // before its completion goes, and on a loaded host the other worker's run, released at the lines
    // above, ended first — the ledger then told the stale end after the run again's, as it happened.
    await testing.waitFor(
      async () => (await scraped(stopped, 'sundial_runs_stale_total', 'phase="complete"')) === 2,
      { what: "the stopped worker's two stale completions" },
    );
    for (const key of Object.values(keys)) await records.set(`release:${key}`, '1');
    const ended = await testing.waitFor(
      async () => {
        const timer = await client.get(keys.again);
        return timer?.status === 'completed' && timer;
      },
      { what: 'the run again to complete' },
    );
    expect(ended).toMatchObject<Partial<Timer>>({
      runCount: 2,
      last: expect.objectContaining({ status: 'ok' }),
    });
    const runs = (await readRuns(records)).filter((run) => run.key === keys.again);
    expect(runs.map(({ event, runCount, pid }) => ({ event, runCount, pid }))).toEqual(
      expect.arrayContaining([
        { event: 'started', runCount: 1, pid: stopped.pid },
        { event: 'started', runCount: 2, pid: other.pid },
        { event: 'finished', runCount: 2, pid: other.pid },
      ]),
    );
    // the stopped worker's runs were aborted: neither finished
    expect(runs.filter((run) => run.event === 'finished' && run.pid === stopped.pid)).toEqual([]);

    // its late completions are stale, on its own metrics (above: phase="complete", and no more since); the
    // settlements were counted once in all
    expect(await scraped(stopped, 'sundial_runs_stale_total', 'phase="complete"')).toBe(2);
    const total = async (name: string) =>
      (await Promise.all([scheduler, stopped, other].map((app) => scraped(app, name)))).reduce(
        (a, b) => a + b,
      );
    expect([await total('sundial_runs_requeued_total'), await total('sundial_runs_lost_total')]).toEqual([
      1, 1,
    ]);

    // nothing went wrong in the stopped worker: its lost leases and BullMQ locks are warns, not errors
    expect(stopped.lines.filter((line) => line.includes('"level":"error"'))).toEqual([]);

    // the ledger says why the timer ran twice, and that the first run's end was stale
    const worker = (entry: LedgerEntry) => /-(\d+)-[^-]+$/.exec(entry.workerId ?? '')?.[1];
    // (BullMQ's stalled check may hand the stopped worker's fire job to a worker again once its 3 s lock ran
    // out while it was stopped: the other worker, or, let go, the stopped worker itself. A claim of it after
    // the run was taken over is stale, `status`: an entry naming the claiming worker. The other's are left
    // out here; the stopped worker's read just like its late completion, so the first after its run was
    // settled is kept, and the others must be as many as its own stale claims, on its metrics.)
    const story = (history: LedgerEntry[]) => {
      let kept = false;
      const shown = (entry: LedgerEntry) => {
        const by = worker(entry);
        if (entry.event !== 'stale' || (by !== String(other.pid) && by !== String(stopped.pid))) return true;
        if (by === String(other.pid) || kept) return false;
        return (kept = true);
      };
      return [...history]
        .reverse()
        .filter(shown)
        .map((entry) => [entry.event, entry.reason, worker(entry)]);
    };
    const stories = async () => {
      const claims = await staleClaims();
      const histories = await Promise.all(Object.values(keys).map((key) => client.history(key)));
      return claims === (await staleClaims()) && { claims, histories };
    };
    // (read between two equal reads of its stale claims: none of them came between its count and the ledger)
    const { claims, histories } = await testing.waitFor(stories, {
      what: 'a ledger read between its counts',
    });
    const stoppedStale = histories
      .flat()
      .filter((entry) => entry.event === 'stale' && worker(entry) === String(stopped.pid));
    if (handedBack === 'claimed') expect(claims).toBeGreaterThanOrEqual(1);
    expect(stoppedStale).toHaveLength(2 + claims);
    const [again, lost] = histories.map(story);
    const [claimedByStopped, claimedByOther] = [stopped, other].map((app) => [
      'claimed',
      undefined,
      String(app.pid),
    ]);
    expect(again).toEqual([
      ['scheduled', undefined, undefined],
      ['armed', undefined, undefined],
      claimedByStopped,
      ['lost', 'requeued', String(stopped.pid)],
      // (armed again when the reconciler put it back; not when a redelivered job's claim took it over)
      ...(again.filter(([event]) => event === 'armed').length > 1 ? [['armed', undefined, undefined]] : []),
      claimedByOther,
      // the stopped worker's late completion, naming it
      ['stale', 'status', String(stopped.pid)],
      ['completed', undefined, String(other.pid)],
    ]);
    expect(lost).toEqual([
      ['scheduled', undefined, undefined],
      ['armed', undefined, undefined],
      claimedByStopped,
      ['lost', 'lost', String(stopped.pid)],
      ['stale', 'status', String(stopped.pid)],
    ]);
  }, 120_000);
});

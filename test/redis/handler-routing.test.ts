import { type LedgerEntry, silentLogger } from '@sundial/core';
import { Dispatcher, FireCommands, RedisTimers, TimerRunner } from '@sundial/redis';
import { waitFor } from '@sundial/testing/harness';
import { documentedAcl } from '../documented-acl';
import { type FireCluster, matching, recorder, useFirePath } from './fire-fixture';

/**
 * docs/spec.md §3.2, a rolling deploy: a worker of the older build lacks handler `h2`, which a worker of
 * the newer build has. The older one never claims a timer of `h2` while a live worker announces it
 * (`P:handlers`): its claim passes it on to another fire job, and nothing of a run is written.
 */
describe('a handler this worker lacks: its runs go to a worker that has it', () => {
  const fire = useFirePath();
  let passes: number;
  /**
   * the `lacking` argument of every claim call, by worker, as text: compared by what it names (a runner
   * makes its list anew when its handlers' announcement is refreshed: two lists, one content)
   */
  let lackingSent: Map<string, (string | undefined)[]>;
  let claimSpy: jest.SpyInstance | undefined;

  beforeEach(() => {
    passes = 0;
    lackingSent = new Map();
    const claim = FireCommands.prototype.claim;
    claimSpy = jest.spyOn(FireCommands.prototype, 'claim').mockImplementation(async function (
      this: FireCommands,
      ...args: Parameters<FireCommands['claim']>
    ) {
      const [, , workerId, , , , lacking] = args;
      lackingSent.set(workerId, [...(lackingSent.get(workerId) ?? []), lacking?.join(',')]);
      const results = await claim.apply(this, args);
      passes += results.filter((result) => result.kind === 'passed').length;
      return results;
    });
  });
  afterEach(() => claimSpy?.mockRestore());

  /** A handler recording when it started (this host's clock is Redis's: same machine). */
  function timed() {
    const started: { key: string; due: number; at: number; runCount: number }[] = [];
    const rec = recorder(
      (ctx) => void started.push({ key: ctx.key, due: ctx.due, at: Date.now(), runCount: ctx.runCount }),
    );
    return { ...rec, started };
  }

  async function claimedBy(cluster: FireCluster, key: string): Promise<string[]> {
    const history: LedgerEntry[] = await cluster.timers.history(key);
    return history.filter((entry) => entry.event === 'claimed').map((entry) => String(entry.workerId));
  }

  /**
   * A dispatcher and runner 'old' (h1) of a new cluster; `newer()` starts 'new' of the newer build (h1 and
   * h2). `announced`: `P:handlers` members written by hand for 60 s before 'old' starts (its first look).
   */
  async function olderFirst(partitions = 1, announced: string[] = []) {
    const cluster = await fire.cluster({ partitions });
    await cluster.dispatcher();
    const until = (await cluster.redisNow()) + 60_000;
    for (const member of announced) await fire.raw.zadd(cluster.timers.keys.handlers, until, member);
    const old = timed();
    const neu = timed();
    await cluster.runner({ h1: old.handler }, { workerId: 'old' });
    const newer = (serve?: number[]) =>
      cluster.runner({ h1: neu.handler, h2: neu.handler }, { workerId: 'new', serve });
    return { cluster, old, neu, newer };
  }

  /** Both runners started: 'old' has h1, 'new' (of the newer build) h1 and h2. */
  async function rolling(partitions = 1, serve?: number[]) {
    const started = await olderFirst(partitions);
    await started.newer(serve);
    return started;
  }

  it('two runners, one lacking h2: one-shots (both deliveries), a trigger and 1 s intervals (held, free) all run on the one that has it, counts and history true, none early', async () => {
    // A newer worker announced h2 (by hand) and the older runner is alone until it has passed runs of h2
    // on: which runner BullMQ hands a job to is not for the test to guess.
    const { cluster, old, neu, newer } = await olderFirst(1, ['1|0|h2']);

    const keys: string[] = [];
    for (let i = 0; i < 8; i++) {
      const key = `once-${i}`;
      keys.push(key);
      const delivery = i % 2 === 0 ? 'at-least-once' : 'at-most-once';
      await cluster.timers.schedule({
        key,
        handler: 'h2',
        delay: 200 + 150 * i,
        delivery,
        removeOnComplete: false,
      });
    }
    await cluster.timers.schedule({
      key: 'held',
      handler: 'h2',
      every: 1000,
      maxRuns: 3,
      removeOnComplete: false,
    });
    await cluster.timers.schedule({
      key: 'free',
      handler: 'h2',
      every: 1000,
      maxRuns: 3,
      awaitTask: false,
      removeOnComplete: false,
    });
    await cluster.timers.schedule({ key: 'trig', handler: 'h2', delay: '1h', removeOnComplete: false });
    await cluster.timers.trigger('trig');
    keys.push('trig');
    await waitFor(() => passes > 0, { what: 'the older runner passing runs of h2 on' });
    await newer();

    const ran = async (key: string): Promise<boolean> => {
      const timer = await cluster.timers.get(key);
      return key === 'trig'
        ? neu.started.some((run) => run.key === key) && timer?.status !== 'running'
        : timer?.status === 'completed';
    };
    await waitFor(async () => (await Promise.all([...keys, 'held', 'free'].map(ran))).every(Boolean), {
      timeoutMs: 15_000, // deadline: left as soon as all ran
      what: 'every h2 timer to have run',
    });

    expect(old.calls).toEqual([]);
    expect(matching(cluster.events, { type: 'failed' })).toEqual([]);
    for (const key of keys) {
      expect(neu.started.filter((run) => run.key === key)).toHaveLength(1);
      expect((await cluster.timers.get(key))?.runCount).toBe(1);
      expect(await claimedBy(cluster, key)).toEqual(['new']);
    }
    for (const key of ['held', 'free']) {
      expect(neu.started.filter((run) => run.key === key).map((run) => run.runCount)).toEqual([1, 2, 3]);
      expect((await cluster.timers.get(key))?.runCount).toBe(3);
      expect((await claimedBy(cluster, key)).every((worker) => worker === 'new')).toBe(true);
    }
    // never early, and a `running` event only for a run that started
    for (const run of neu.started) expect(run.at).toBeGreaterThanOrEqual(run.due);
    expect(matching(cluster.events, { type: 'running' })).toHaveLength(neu.started.length);
    // the older runner passed the jobs it took on
    expect(passes).toBeGreaterThan(0);
    expect(new Set(lackingSent.get('old'))).toEqual(new Set(['h2']));
    // the normal path: a runner with every announced handler sends nothing of this with its claims
    expect(new Set(lackingSent.get('new'))).toEqual(new Set([undefined]));
  });

  it("the lacking runner alone once the other has gone: its runs are passed on until 60 s past their due, not failed when the announcement expires (a rollback: the newer build's cron rows go meanwhile)", async () => {
    const cluster = await fire.cluster();
    await cluster.dispatcher();
    // A worker with h2 that stopped ~11 s ago: its announcement lasts 4 s more, so the runner's first look
    // (at its start, which a loaded host may take a second or two to reach) finds it.
    const expiresAt = (await cluster.redisNow()) + 4_000;
    await fire.raw.zadd(cluster.timers.keys.handlers, expiresAt, '1|0|h2');
    const old = timed();
    await cluster.runner({ h1: old.handler }, { workerId: 'old' });
    // 'row': a newer build's cron slot due now (its row removed by the older build a few seconds after the
    // announcement expired); 'lone': a run already 50 s past its due
    await cluster.timers.schedule({ key: 'row', handler: 'h2', delay: 200, removeOnComplete: false });
    const lone = await cluster.timers.schedule({
      key: 'lone',
      handler: 'h2',
      at: Date.now() - 50_000,
      removeOnComplete: false,
    });
    // Once 60 s past its due, 'lone' is claimed and fails — not at the runner's first look after the
    // announcement expired (≤ 5 s after it), which would be ~55 s past its due.
    const failed = await waitFor(() => matching(cluster.events, { type: 'failed', key: 'lone' })[0], {
      timeoutMs: 15_000, // deadline
      what: 'the failed run',
    });
    expect(failed.error).toMatchObject({ reason: 'unknown-handler' });
    expect(failed.at - lone.dueAt).toBeGreaterThanOrEqual(60_000);
    expect(await cluster.timers.get('lone')).toMatchObject({ status: 'failed', runCount: 1 });
    expect(await claimedBy(cluster, 'lone')).toEqual(['old']);
    // 'row', due ~10 s ago and its handler's announcement expired ~6 s ago (a look since found it gone), is
    // still passed on: removed now, it ends never claimed, never failed.
    expect(await cluster.timers.get('row')).toMatchObject({ status: 'pending', runCount: 0, last: null });
    expect(await cluster.timers.cancel('row')).toBe(true);
    expect(matching(cluster.events, { key: 'row', type: 'failed' })).toEqual([]);
    expect(await claimedBy(cluster, 'row')).toEqual([]);
    expect(passes).toBeGreaterThan(0);
  });

  it('a handler no worker announces fails at once', async () => {
    const { cluster } = await rolling();
    await cluster.timers.schedule({ key: 'typo', handler: 'h2x', delay: 100 });
    const failed = await waitFor(() => matching(cluster.events, { type: 'failed', key: 'typo' })[0], {
      what: 'the typo run to fail',
    });
    expect(failed.error).toMatchObject({ reason: 'unknown-handler' });
    // at once: its first claim failed it, none passed it on (not a bound on the time since its due, which
    // a loaded host's hand-off and claim may take more than a second to reach)
    expect(passes).toBe(0);
    expect(await claimedBy(cluster, 'typo')).toHaveLength(1);
  });

  it('announced per partition served: a worker with h2 for partition 1 only gets its runs there; in partition 0 they fail at once', async () => {
    const { cluster, neu } = await rolling(2, [1]);
    const names = Array.from({ length: 40 }, (_, n) => `s-${n}`);
    const inZero = names.filter((key) => cluster.partitionOf(key) === 0).slice(0, 2);
    const inOne = names.filter((key) => cluster.partitionOf(key) === 1).slice(0, 4);
    for (const [i, key] of [...inZero, ...inOne].entries())
      await cluster.timers.schedule({ key, handler: 'h2', delay: 200 + 100 * i, removeOnComplete: false });
    const ended = async (key: string) =>
      ['completed', 'failed'].includes((await cluster.timers.get(key))?.status ?? '');
    await waitFor(async () => (await Promise.all([...inZero, ...inOne].map(ended))).every(Boolean), {
      what: 'every run to end',
    });
    for (const key of inZero)
      expect(await cluster.timers.get(key)).toMatchObject({ status: 'failed', runCount: 1 });
    for (const key of inOne) expect(await claimedBy(cluster, key)).toEqual(['new']);
    expect(neu.started.map((run) => run.key).sort()).toEqual([...inOne].sort());
  });

  it('a run 60 s past its due is claimed (and fails) though a live worker announces its handler', async () => {
    const cluster = await fire.cluster();
    await cluster.dispatcher();
    // A worker with h2 announced for the whole test, that never takes a job.
    await fire.raw.zadd(cluster.timers.keys.handlers, (await cluster.redisNow()) + 60_000, '1|0|h2');
    const old = timed();
    await cluster.runner({ h1: old.handler }, { workerId: 'old' });
    const late = await cluster.timers.schedule({ key: 'late', handler: 'h2', at: Date.now() - 61_000 });
    const failed = await waitFor(() => matching(cluster.events, { type: 'failed', key: 'late' })[0], {
      what: 'the late run to fail',
    });
    expect(failed.error).toMatchObject({ reason: 'unknown-handler' });
    expect(failed.at - late.dueAt).toBeGreaterThan(60_000);
    expect(passes).toBe(0);
    // a timer of h2 due now is passed on meanwhile, never claimed here
    await cluster.timers.schedule({ key: 'now', handler: 'h2', delay: 0 });
    await waitFor(() => passes > 2, { what: 'passes of the timer due now' });
    expect(await cluster.timers.get('now')).toMatchObject({ status: 'pending', runCount: 0, last: null });
    expect(matching(cluster.events, { key: 'now' }).map((event) => event.type)).toEqual(['scheduled']);
  });

  it('a claim passing a timer on writes nothing of a run: the row, its ledger and the events are as before; `armed` and `jobs` name the new job', async () => {
    const cluster = await fire.cluster();
    const timer = await cluster.timers.schedule({ key: 'k', handler: 'h2', delay: 50 });
    const keys = cluster.timers.keys;
    // handed off by hand, as take-due does
    const taken = await cluster.commands.takeDue(0, 10, 100);
    expect(taken.job?.timers.map((ref) => ref.key)).toEqual(['k']);
    const before = await fire.raw.hgetall(keys.row('k'));
    const ref = { id: timer.id, key: 'k', version: 1, due: timer.dueAt };
    const [result] = await cluster.commands.claim(0, 30_000, 'old', [ref], false, 5_000, ['h2']);
    expect(result).toEqual({
      kind: 'passed',
      jobId: expect.stringMatching(new RegExp(`^t-${timer.id}-v1-p\\d+$`)) as string,
    });
    expect(await fire.raw.hgetall(keys.row('k'))).toEqual(before);
    const armedAt = await fire.raw.zscore(keys.armed(0), 'k');
    // (take-due's own job may be recorded in the same ms)
    expect(await fire.raw.zrangebyscore(keys.jobs(0), armedAt!, armedAt!)).toContain(
      result.kind === 'passed' && result.jobId,
    );
    expect(matching(cluster.events, { key: 'k' }).map((event) => event.type)).not.toContain('running');
    // a claim without `lacking` claims it as always
    const [claimed] = await cluster.commands.claim(0, 30_000, 'new', [ref], false, 5_000);
    expect(claimed).toMatchObject({ kind: 'claimed', fields: { rc: '1' } });
    // (newest first)
    expect((await cluster.timers.history('k')).map((entry) => entry.event)).toEqual([
      'claimed',
      'armed',
      'scheduled',
    ]);
  });

  it("under docs/operations.md's ACL user: handlers announced, a timer passed on and run, no refusal", async () => {
    await fire.raw.call('ACL', 'SETUSER', ...documentedAcl('pw'));
    await fire.raw.call('ACL', 'LOG', 'RESET');
    const shared = {
      connection: fire.url().replace('redis://', 'redis://sundial:pw@'),
      prefix: 'sundial',
      logger: silentLogger,
    };
    const neu = timed();
    const timers = new RedisTimers(shared);
    const dispatcher = new Dispatcher(shared);
    const old = new TimerRunner({ ...shared, handlers: { h1: neu.handler }, workerId: 'old' });
    const newer = (workerId: string) =>
      new TimerRunner({ ...shared, handlers: { h1: neu.handler, h2: neu.handler }, workerId });
    const young = newer('new');
    const runners = [old, young];
    try {
      // The newer runner announces h2 and stops; its announcement lasts on, so the older runner passes the
      // runs of h2 on until another newer runner takes them — which runner BullMQ hands a job to is not
      // for the test to guess.
      await Promise.all([dispatcher.start(), young.start()]);
      await young.close(0);
      await old.start();
      for (let i = 0; i < 5; i++)
        await timers.schedule({ key: `acl-${i}`, handler: 'h2', delay: 100 + 50 * i });
      await waitFor(() => passes > 2, { what: 'the older runner passing them on' });
      const next = newer('next');
      runners.push(next);
      await next.start();
      await waitFor(() => neu.calls.length === 5, { timeoutMs: 10_000, what: 'the runs' }); // deadline
      expect((await fire.raw.zrange('sundial:handlers', '0', '-1')).sort()).toEqual(['1|0|h1', '1|0|h2']);
      expect(passes).toBeGreaterThan(0);
      const refused = ((await fire.raw.call('ACL', 'LOG')) as unknown[][]).map(
        (entry) => entry[entry.indexOf('object') + 1],
      );
      expect(refused.filter((object) => object !== 'config|get')).toEqual([]);
    } finally {
      await Promise.all(runners.map((runner) => runner.close(0)));
      await dispatcher.close();
      await timers.dispose();
    }
  });
});

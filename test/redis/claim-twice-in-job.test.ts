import { claimCopy } from '@sundial/redis';
import { type FireCluster, story, useFirePath } from './fire-fixture';

const fire = useFirePath();

/**
 * A fire job could name one (id, version) twice: a dispatcher pass keeps its job open over up to five
 * take-due calls and adds it to BullMQ after them, so when its process stalls longer than the
 * reconciler's grace between two calls (CI at load 19: 5 s), the reconciler finds the first call's
 * hand-off without a job, puts it back in `due`, and the pass's next call takes it into the same job
 * again. The dispatcher now names it once (test/redis/fire-stalled-pass.test.ts); a dispatcher of an
 * older release, during a rolling upgrade, still names it twice. Its worker claims both refs in one call,
 * under one claim token. That token marks a claim
 * repeated after a lost reply ("this very claim again"), so the second ref was answered `claimed` too
 * and the worker ran the timer twice, with nothing lost and nothing in the ledger but one claim
 * (test/cluster/repartition.test.ts: a run twice without a `lost`/`requeued` entry). A ref the same
 * call already claimed is a duplicate delivery: stale, as in a call of its own (docs/spec.md §3.2).
 */
describe('claim: one call naming a timer twice runs it once', () => {
  it('a held run: the job the reconciler re-armed into is claimed once, the repeat stale', async () => {
    const cluster = await fire.cluster();
    const timer = await cluster.timers.schedule({ key: 'k', handler: 'h', delay: 0 });
    const [claimed, again] = await cluster.commands.claim(0, 30_000, 'w', await jobNamingTwice(cluster));
    expect(again).toEqual({ kind: 'stale', reason: 'status' });
    if (claimed.kind !== 'claimed') throw new Error(`claimed: ${JSON.stringify(claimed)}`);
    // as its worker completes it: with its claim's copy of the row, whose kept entries the stale one wrote
    const run = { id: timer.id, key: 'k', version: 1, runCount: 1, missed: 0, overlap: 0, once: true };
    const copy = claimCopy(claimed, 30_000, 'w');
    expect(copy).toBeDefined();
    const [done] = await cluster.commands.complete(0, [{ ...run, mode: 'held', outcome: 'ok', claim: copy }]);
    expect(done).toMatchObject({ kind: 'done' });
    expect(story(await cluster.timers.history('k'))).toEqual([
      ['scheduled', 1],
      ['armed', 1],
      ['armed', 1],
      ['claimed', 1],
      ['stale', 1, 'status'],
      ['completed', 1],
    ]);
  });

  it('a free run (awaitTask false): claimed once, the repeat stale', async () => {
    const cluster = await fire.cluster();
    const timer = await cluster.timers.schedule({ key: 'f', handler: 'h', every: 60_000, awaitTask: false });
    // due now rather than in a minute
    const due = String(timer.dueAt - 60_000);
    await fire.raw.hset(cluster.timers.keys.row('f'), 'd', due);
    await fire.raw.zadd(cluster.timers.keys.due(0), due, 'f');
    const [claimed, again] = await cluster.commands.claim(0, 30_000, 'w', await jobNamingTwice(cluster));
    expect(claimed).toMatchObject({ kind: 'claimed', mode: 'free' });
    expect(again).toEqual({ kind: 'stale', reason: 'status' });
  });
});

/**
 * The refs of a job that names the one timer due twice, as a dispatcher pass of an older release built
 * it: its first call's hand-off armed again by the reconciler (the job not added yet), then taken by its
 * next call.
 */
async function jobNamingTwice(cluster: FireCluster) {
  const first = await cluster.commands.takeDue(0, 100, 1_000);
  expect(await cluster.reconciler({ graceMs: 0 }).reconcileOnce()).toMatchObject({ rearmed: 1 });
  const second = await cluster.commands.takeDue(0, 100, 1_000, first.job!.jobId);
  expect(second.job!.jobId).toBe(first.job!.jobId);
  const refs = [...first.job!.timers, ...second.job!.timers];
  expect(refs.map(({ version }) => version)).toEqual([1, 1]);
  expect(refs[1]).toEqual(refs[0]);
  return refs;
}

import type { LedgerEntry } from '@sundial/core';
import { claimCopy, type Completion, scriptOfCall } from '@sundial/redis';
import { waitFor } from '@sundial/testing/harness';
import type { ClaimResult } from '../../libs/redis/src/store/claim-reply';
import { resendSafe } from '../../libs/redis/src/store/requests';
import { type FireCluster, useFirePath } from './fire-fixture';

// A held one-shot ending ok is settled from its worker's copy of the claim, its row unread, only while
// that copy is still the row (docs/design.md "Read-free completion"); every other case reads the row, as before.
const fire = useFirePath();

const LEASE_MS = 30_000;
const LIFE = [['scheduled'], ['armed'], ['claimed'], ['completed']];
/** A life whose run a duplicate claim (or an older run's completion) met: its stale entry between. */
const MET_STALE = [['scheduled'], ['armed'], ['claimed'], ['stale', 'status'], ['completed']];

type Claimed = Extract<ClaimResult, { kind: 'claimed' }>;

/** Oldest first, as `[event, reason?]`. */
const story = (entries: LedgerEntry[]) =>
  [...entries].reverse().map(({ event, reason }) => (reason ? [event, reason] : [event]));

/** HMGETs Redis ran so far (complete.lua's read of a one-shot's row is the only one these tests cause). */
async function rowReads(): Promise<number> {
  const stats = await fire.raw.info('commandstats');
  return Number(/cmdstat_hmget:calls=(\d+)/.exec(stats)?.[1] ?? 0);
}

/** A one-shot due now, handed off and claimed by `worker`. */
async function claimNew(cluster: FireCluster, key: string, worker = 'w-1') {
  await cluster.timers.schedule({ key, handler: 'h', delay: 0 });
  const partition = cluster.partitionOf(key);
  const job = (await cluster.commands.takeDue(partition, 100, 1_000)).job!;
  const [claimed] = await cluster.commands.claim(partition, LEASE_MS, worker, job.timers);
  if (claimed.kind !== 'claimed') throw new Error(`not claimed: ${claimed.kind}`);
  return { partition, refs: job.timers, claimed, completion: okCompletion(claimed, worker) };
}

/** The completion TimerRunner sends for a held run that ended ok, with its claim's copy. */
function okCompletion(claimed: Claimed, worker: string): Completion {
  const { fields } = claimed;
  return {
    id: fields.id,
    key: fields.key,
    version: Number(fields.rv),
    runCount: Number(fields.rc),
    mode: 'held',
    outcome: 'ok',
    missed: 0,
    overlap: 0,
    once: true,
    claim: claimCopy(claimed, LEASE_MS, worker),
  };
}

/** Completes `completion` and returns its reply and how many rows Redis read for it. */
async function complete(cluster: FireCluster, partition: number, completion: Completion) {
  const before = await rowReads();
  const [reply] = await cluster.commands.complete(partition, [completion]);
  return { reply, reads: (await rowReads()) - before };
}

/** Completes `completion`: done, after `reads` row reads. */
async function expectDone(cluster: FireCluster, partition: number, completion: Completion, reads: number) {
  expect(await complete(cluster, partition, completion)).toMatchObject({ reply: { kind: 'done' }, reads });
}

describe('complete of a held one-shot ending ok from its claim, unread (docs/design.md "Read-free completion")', () => {
  it('reads no row for a run claimed ahead of its due either (its lease starts at the claim, lf is the due)', async () => {
    const cluster = await fire.cluster();
    await cluster.timers.schedule({ key: 'ahead', handler: 'h', delay: 2_000 });
    const job = (await cluster.commands.takeDue(0, 100, 5_000)).job!;
    const [claimed] = await cluster.commands.claim(0, LEASE_MS, 'w-1', job.timers, false, 5_000);
    if (claimed.kind !== 'claimed') throw new Error(`not claimed: ${claimed.kind}`);
    expect(claimed.leftMs).toBeGreaterThan(1_000);
    expect(Number(claimed.fields.lf)).toBe(claimed.due);
    await expectDone(cluster, 0, okCompletion(claimed, 'w-1'), 0);
    expect(story(await cluster.timers.history('ahead'))).toEqual(LIFE);
  });

  it('reads no row while the copy is true, and records what happened once', async () => {
    const cluster = await fire.cluster();
    const { partition, completion } = await claimNew(cluster, 'plain');
    expect(completion.claim).toBeDefined();
    expect(await complete(cluster, partition, completion)).toEqual({
      reply: { kind: 'done', missed: 0, overlap: 0 },
      reads: 0,
    });
    expect(await fire.raw.exists(cluster.timers.keys.row('plain'))).toBe(0);
    expect(await cluster.timers.check(completion.id)).toBe(false);
    expect(story(await cluster.timers.history('plain'))).toEqual(LIFE);
    expect(cluster.events.filter((event) => event.key === 'plain').map((event) => event.type)).toEqual([
      'scheduled',
      'running',
      'completed',
    ]);
  });

  it('sends a plain ok run with its copy as 8 elements (the rest implied), any other run as 14 without it', async () => {
    const cluster = await fire.cluster();
    const plain = await claimNew(cluster, 'short');
    const failing = await claimNew(cluster, 'long');
    const failed: Completion = {
      ...failing.completion,
      outcome: 'failed',
      error: { message: 'boom' },
      claim: { ...claimCopy(failing.claimed, LEASE_MS, 'w-1')! },
    };
    const monitor = await fire.raw.monitor();
    const sent: string[][] = [];
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (scriptOfCall(args) === 'complete') sent.push(args);
    });
    try {
      const replies = await cluster.commands.complete(0, [plain.completion, failed]);
      expect(replies.map((reply) => reply.kind)).toEqual(['done', 'done']);
      await waitFor(() => sent.length > 0, { what: 'the complete call seen' });
    } finally {
      monitor.disconnect();
    }
    // FCALL name 1 base prefix ledgerSize runs worker kept…
    const runs = JSON.parse(sent[0][6]) as unknown[][];
    expect(runs.map((run) => run.length)).toEqual([8, 14]);
    // the worker, then the one copy's kept entries (MONITOR shows their newlines escaped)
    expect(sent[0].slice(7)).toEqual(['w-1', plain.claimed.kept!.replaceAll('\n', '\\n')]);
    expect(story(await cluster.timers.history('short'))).toEqual(LIFE);
    expect(story(await cluster.timers.history('long'))).toEqual([
      ['scheduled'],
      ['armed'],
      ['claimed'],
      ['failed'],
    ]);
  });

  it('reads the row after a duplicate claim wrote its stale entry (and the kept ones): no entry twice', async () => {
    const cluster = await fire.cluster();
    const { partition, refs, completion } = await claimNew(cluster, 'dup');
    const [duplicate] = await cluster.commands.claim(partition, LEASE_MS, 'w-2', refs);
    expect(duplicate).toEqual({ kind: 'stale', reason: 'status' });
    expect(await complete(cluster, partition, completion)).toEqual({
      reply: { kind: 'done', missed: 0, overlap: 0 },
      reads: 1,
    });
    expect(story(await cluster.timers.history('dup'))).toEqual(MET_STALE);
  });

  it('reads the row after an older run`s stale completion wrote the ledger of the running row', async () => {
    const cluster = await fire.cluster();
    const { partition, completion } = await claimNew(cluster, 'older');
    const [older] = await cluster.commands.complete(partition, [
      { ...completion, runCount: 0, claim: undefined, once: false },
    ]);
    expect(older).toEqual({ kind: 'stale', reason: 'status' });
    await expectDone(cluster, partition, completion, 1);
    expect(story(await cluster.timers.history('older'))).toEqual(MET_STALE);
  });

  it('a renewed lease is marked: a copy naming the renewed end (not the claim`s) is read too', async () => {
    const cluster = await fire.cluster();
    const { partition, refs, completion } = await claimNew(cluster, 'renewed');
    // a duplicate claim takes the kept entries (marking the lease), then the worker renews it
    await cluster.commands.claim(partition, LEASE_MS, 'w-2', refs);
    expect(
      await cluster.commands.renewLeases(partition, LEASE_MS, 'w-1', [{ key: 'renewed', runCount: 1 }]),
    ).toEqual(['held']);
    const renewedEnd = Number(await fire.raw.hget(cluster.timers.keys.row('renewed'), 'lu'));
    expect(await fire.raw.zscore(cluster.timers.keys.leases(partition), 'renewed')).toBe(`${renewedEnd}.5`);
    // a worker that knew its renewal's end would still find it marked
    const knowing = { ...completion, claim: { ...completion.claim!, leaseEnd: renewedEnd } };
    await expectDone(cluster, partition, knowing, 1);
    expect(story(await cluster.timers.history('renewed'))).toEqual(MET_STALE);
  });

  it.each([
    {
      what: 'a renewal between claim and completion: read',
      reads: 1,
      meanwhile: (cluster: FireCluster, partition: number) =>
        cluster.commands.renewLeases(partition, LEASE_MS, 'w-1', [{ key: 'meanwhile', runCount: 1 }]),
    },
    {
      what: 'a reschedule while it runs is refused: unread',
      reads: 0,
      meanwhile: (cluster: FireCluster) =>
        expect(cluster.timers.reschedule('meanwhile', { delay: '1h' })).rejects.toMatchObject({
          reason: 'inactive',
        }),
    },
  ])('$what, done, recorded once', async ({ reads, meanwhile }) => {
    const cluster = await fire.cluster();
    const { partition, completion } = await claimNew(cluster, 'meanwhile');
    await meanwhile(cluster, partition);
    await expectDone(cluster, partition, completion, reads);
    expect(story(await cluster.timers.history('meanwhile'))).toEqual(LIFE);
  });

  it('cancelled while running: stale gone, nothing recorded for the run', async () => {
    const cluster = await fire.cluster();
    const { partition, completion } = await claimNew(cluster, 'cancelled');
    expect(await cluster.timers.cancel('cancelled')).toBe(true);
    expect((await complete(cluster, partition, completion)).reply).toEqual({ kind: 'stale', reason: 'gone' });
    expect(story(await cluster.timers.history('cancelled'))).toEqual([
      ['scheduled'],
      ['armed'],
      ['claimed'],
      ['cancelled', 'cancelled'],
      ['stale', 'gone'],
    ]);
  });

  it('replaced while running, the new life leased to the same end: the old run is stale, the new row untouched', async () => {
    const cluster = await fire.cluster();
    const { partition, completion } = await claimNew(cluster, 'again');
    expect(await cluster.timers.cancel('again')).toBe(true);
    const next = await claimNew(cluster, 'again', 'w-2');
    // a worker with another leaseMs could claim the new life to end at the very same ms
    const leases = cluster.timers.keys.leases(partition);
    await fire.raw.zadd(leases, 'XX', String(completion.claim!.leaseEnd), 'again');
    expect((await complete(cluster, partition, completion)).reply).toEqual({ kind: 'stale', reason: 'gone' });
    expect(await fire.raw.hget(cluster.timers.keys.row('again'), 's')).toBe('running');
    expect(await cluster.timers.check(next.completion.id)).toBe(true);
    expect(await complete(cluster, partition, next.completion)).toMatchObject({ reply: { kind: 'done' } });
  });

  it('a replayed completion answers as the first; sent again once forgotten, it is stale gone', async () => {
    const cluster = await fire.cluster();
    const { partition, completion } = await claimNew(cluster, 'replay');
    const request = resendSafe();
    const first = await cluster.commands.complete(partition, [completion], request);
    expect(first).toEqual([{ kind: 'done', missed: 0, overlap: 0 }]);
    expect(await cluster.commands.complete(partition, [completion], request)).toEqual(first);
    const again = await complete(cluster, partition, completion);
    expect(again.reply).toEqual({ kind: 'stale', reason: 'gone' });
    expect(story(await cluster.timers.history('replay'))).toEqual([...LIFE, ['stale', 'gone']]);
  });

  it('an older worker`s completion (no copy) and an older claim`s reply (no kept entries) read the row', async () => {
    const cluster = await fire.cluster();
    const { partition, completion } = await claimNew(cluster, 'old-worker');
    await expectDone(cluster, partition, { ...completion, claim: undefined }, 1);
    expect(story(await cluster.timers.history('old-worker'))).toEqual(LIFE);

    const { partition: p2, claimed } = await claimNew(cluster, 'old-claim');
    const asOldClaim: Claimed = { ...claimed, kept: undefined };
    const oldClaimCompletion = okCompletion(asOldClaim, 'w-1');
    expect(oldClaimCompletion.claim).toBeUndefined();
    await expectDone(cluster, p2, oldClaimCompletion, 1);
    expect(story(await cluster.timers.history('old-claim'))).toEqual(LIFE);
  });
});
